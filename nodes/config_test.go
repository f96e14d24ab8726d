package nodes

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestFactoriesGetDefaults: what a blueprint leaves out reaches the node as
// the declared default, and what it writes wins.
func TestFactoriesGetDefaults(t *testing.T) {
	node := func(typ string, cfg map[string]any) *blueprint.Node {
		return &blueprint.Node{ID: "n", Type: typ, Config: cfg}
	}
	r, err := newReview(node("review", map[string]any{}), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := &Review{queue: "local", base: "main", baseURL: "https://api.github.com", tokenEnv: "GITHUB_TOKEN", dir: ".sandgate/reviews"}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("review defaults: got %+v, want %+v", r, want)
	}
	if r, _ := newReview(node("review", map[string]any{}), nil, "/state/reviews"); r.(*Review).dir != "/state/reviews" {
		t.Fatalf("the registry's review dir was not used: %+v", r)
	}
	if r, _ := newReview(node("review", map[string]any{"dir": "mine", "base": "dev"}), nil, "/state/reviews"); r.(*Review).dir != "mine" || r.(*Review).base != "dev" {
		t.Fatalf("written values lost to defaults: %+v", r)
	}
	g, err := newGitCommit(node("git_commit", map[string]any{}))
	if err != nil || g.(*GitCommit).author.Name != "sandgate" || g.(*GitCommit).author.Email != "sandgate@localhost" {
		t.Fatalf("git_commit default author: %+v %v", g, err)
	}
	ts, err := newTest(node("test", map[string]any{"run": blueprint.Argv{"go", "test"}}))
	if err != nil || ts.(*Test).format != "auto" || ts.(*Test).run.Field != "run" {
		t.Fatalf("test defaults: %+v %v", ts, err)
	}
	p, err := newProtect(node("protect", map[string]any{"paths": []string{"x"}}))
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
		{"test", wrap(newTest), map[string]any{"run": "go test", "format": "json"}, `format: must be one of`},
		{"diff_cap", wrap(newDiffCap), map[string]any{"max_lines": "10"}, "max_lines: expected int"},
		{"git_push", wrap(func(n *blueprint.Node) (any, error) { return newGitPush(n, nil) }), map[string]any{"remote": "r", "delete_on_reject": "yes"}, "delete_on_reject: expected bool"},
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
