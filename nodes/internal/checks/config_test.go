package checks

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestFactoriesGetDefaults: what a blueprint leaves out reaches the node as
// the declared default, and what it writes wins.
func TestFactoriesGetDefaults(t *testing.T) {
	p, err := newProtect(&blueprint.Node{ID: "n", Type: "protect", Config: map[string]any{"paths": []string{"x"}}})
	if err != nil || p.(*Protect).revert {
		t.Fatalf("protect defaults to fail: %+v %v", p, err)
	}
}

// TestFactoriesRefuseWrongValues builds nodes assembled in Go, past the
// loader and past guard: a value of the wrong Go type is refused naming
// the key, where reading the map by hand used to drop it to "" or panic
// (protect's paths).
func TestFactoriesRefuseWrongValues(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		new  func(*blueprint.Node) (any, error)
		cfg  map[string]any
		want string
	}{
		{"protect", wrap(newProtect), map[string]any{"paths": "x"}, "paths: expected string_list"},
		{"protect", wrap(newProtect), map[string]any{}, `needs key "paths"`},
		{"diff_cap", wrap(newDiffCap), map[string]any{"max_lines": "10"}, "max_lines: expected int"},
	} {
		_, err := tc.new(&blueprint.Node{ID: "n", Type: tc.typ, Config: tc.cfg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: got %v, want %q", tc.typ, tc.cfg, err, tc.want)
		}
	}
}

func wrap[N any](f func(*blueprint.Node) (N, error)) func(*blueprint.Node) (any, error) {
	return func(n *blueprint.Node) (any, error) { return f(n) }
}
