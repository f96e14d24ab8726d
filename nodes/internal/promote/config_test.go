package promote

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestFactoriesGetDefaults: what a blueprint leaves out reaches the node as
// the declared default, and what it writes wins.
func TestFactoriesGetDefaults(t *testing.T) {
	g, err := newGitCommit(&blueprint.Node{ID: "n", Type: "git_commit", Config: map[string]any{}})
	if err != nil || g.(*GitCommit).author.Name != "sandgate" || g.(*GitCommit).author.Email != "sandgate@localhost" {
		t.Fatalf("git_commit default author: %+v %v", g, err)
	}
}

// TestFactoriesRefuseWrongValues builds a node assembled in Go, past the
// loader and past guard: a value of the wrong Go type is refused naming
// the key.
func TestFactoriesRefuseWrongValues(t *testing.T) {
	cfg := map[string]any{"remote": "r", "delete_on_reject": "yes"}
	_, err := newGitPush(&blueprint.Node{ID: "n", Type: "git_push", Config: cfg}, nil)
	if want := "delete_on_reject: expected bool"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("git_push %v: got %v, want %q", cfg, err, want)
	}
}
