package testgate

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestFactoriesGetDefaults: what a blueprint leaves out reaches the node as
// the declared default, and what it writes wins.
func TestFactoriesGetDefaults(t *testing.T) {
	ts, err := newTest(&blueprint.Node{ID: "n", Type: "test", Config: map[string]any{"run": blueprint.Argv{"go", "test"}}})
	if err != nil || ts.(*Test).format != "auto" || ts.(*Test).run.Field != "run" {
		t.Fatalf("test defaults: %+v %v", ts, err)
	}
}

// TestFactoriesRefuseWrongValues builds a node assembled in Go, past the
// loader and past guard: a value of the wrong Go type is refused naming
// the key.
func TestFactoriesRefuseWrongValues(t *testing.T) {
	cfg := map[string]any{"run": "go test", "format": "json"}
	_, err := newTest(&blueprint.Node{ID: "n", Type: "test", Config: cfg})
	if want := `format: must be one of`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("test %v: got %v, want %q", cfg, err, want)
	}
}
