package blueprint_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/blueprint"
)

// hooked is a type set whose "gate" type refuses the value "bad" in its
// list field and a zero limit, through the Check hook.
var hooked = blueprint.MapTypes{"gate": {Name: "gate",
	Fields: map[string]blueprint.Field{
		"items": {Kind: blueprint.KindStringList},
		"limit": {Kind: blueprint.KindInt},
		"mode":  {Kind: blueprint.KindString, Enum: []string{"fast", "slow"}},
		"run":   {Kind: blueprint.KindString, Required: true},
		"wait":  {Kind: blueprint.KindDuration},
	},
	Check: func(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
		var ds []blueprint.Diagnostic
		items, _ := n.Config["items"].([]string)
		for i, it := range items {
			if it == "bad" {
				ds = append(ds, n.ErrorAt("items", i, "item %q refused%s", it, blueprint.Suggest("bda", []string{"bad", "good"})))
			}
		}
		if l, _ := n.Config["limit"].(int); l == 0 {
			ds = append(ds, n.ErrorAt("limit", -1, "limit must be positive"))
		}
		return ds
	}}}

func TestCheckHookPositions(t *testing.T) {
	cases := []struct{ name, node, want string }{
		{"list item", "{type: gate, run: x, limit: 1, items: [ok, bad], next: b}",
			"b.yaml:5:49: nodes.a.items[1]: item \"bad\" refused (did you mean \"bad\"?)\n" +
				"      a: {type: gate, run: x, limit: 1, items: [ok, bad], next: b}\n" +
				"                                                    ^"},
		{"scalar field", "{type: gate, run: x, limit: 0, next: b}",
			"b.yaml:5:34: nodes.a.limit: limit must be positive"},
		{"absent field points at the node", "{type: gate, run: x, next: b}",
			"b.yaml:5:3: nodes.a.limit: limit must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "version: 1\nname: t\nstart: a\nnodes:\n  a: " + c.node + "\n  b: {type: succeed}\n"
			_, err := blueprint.Parse("b.yaml", []byte(src), blueprint.WithTypes(hooked))
			var ds blueprint.Diagnostics
			if !errors.As(err, &ds) || !strings.HasPrefix(ds.Pretty(), c.want) {
				t.Fatalf("got\n%v\nwant prefix\n%s", ds.Pretty(), c.want)
			}
		})
	}
}

// TestCheckConfig covers nodes assembled in Go: wrong Go types, missing
// required fields and enum values are refused by field name before the hook
// runs, and the hook's findings come back when the types are right.
func TestCheckConfig(t *testing.T) {
	gate := hooked["gate"]
	cases := []struct {
		cfg  map[string]any
		want string
	}{
		{nil, `node type gate needs key "run"`},
		{map[string]any{"run": 5, "limit": 1}, "run: expected string, got int"},
		{map[string]any{"run": "x", "items": "bad", "limit": 1}, "items: expected string_list, got string"},
		{map[string]any{"run": "x", "wait": "1s", "limit": 1}, "wait: expected duration, got string"},
		{map[string]any{"run": "x", "mode": "fats", "limit": 1}, `mode: must be one of [fast slow], got "fats" (did you mean "fast"?)`},
		{map[string]any{"run": "x", "items": []string{"bad"}, "limit": 1}, `items[0]: item "bad" refused`},
		{map[string]any{"run": "x"}, "limit: limit must be positive"},
		{map[string]any{"run": "x", "limit": 2, "wait": time.Second, "items": []string{"ok"}}, ""},
	}
	for _, c := range cases {
		err := blueprint.ConfigError(blueprint.CheckConfig(gate, &blueprint.Node{ID: "a", Type: "gate", Config: c.cfg}))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: unexpected %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%v: got %v, want %s", c.cfg, err, c.want)
		}
	}
}

// TestErrorAtFollowsMergeKeys points at a value that came in through a
// YAML merge key, where the user wrote it.
func TestErrorAtFollowsMergeKeys(t *testing.T) {
	var doc yaml.Node
	src := "base: &b {limit: 0}\nnode:\n  <<: *b\n  run: x\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	raw := doc.Content[0].Content[3]
	d := (&blueprint.Node{ID: "a", Raw: raw}).ErrorAt("limit", -1, "m")
	if d.Line != 1 || d.Col != 18 || d.Path != "nodes.a.limit" {
		t.Fatalf("got %+v, want 1:18 nodes.a.limit", d)
	}
}
