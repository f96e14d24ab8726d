package review

import (
	"reflect"
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
}
