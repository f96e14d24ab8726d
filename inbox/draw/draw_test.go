package draw

import (
	"fmt"
	"testing"
	"time"
)

func ExampleLayout() {
	g := Layout([]string{"implement", "check", "done"},
		map[string][]string{"implement": {"check"}, "check": {"done", "implement"}},
		map[string]string{"implement": "agent", "check": "test", "done": "succeed"},
		func(id string) (string, int) { return "pass", 1 })
	for _, n := range g.Nodes {
		fmt.Println(n.ID, n.X, n.Y)
	}
	fmt.Println(len(g.Edges), "edges;", "loop drawn apart:", g.Edges[2].Back)
	// Output:
	// implement 16 16
	// check 16 84
	// done 16 152
	// 3 edges; loop drawn apart: true
}

// TestLayoutRanksSideBySide: nodes of one rank share a row.
func TestLayoutRanksSideBySide(t *testing.T) {
	g := Layout([]string{"a", "b", "c"}, map[string][]string{"a": {"b", "c"}}, nil, func(string) (string, int) { return "pending", 0 })
	if g.Nodes[1].Y != g.Nodes[2].Y || g.Nodes[1].X == g.Nodes[2].X || g.Nodes[0].Y >= g.Nodes[1].Y {
		t.Fatalf("%+v", g.Nodes)
	}
}

func TestBuildScalesToTheRun(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := Build([]Span{{Label: "a", Class: "pass", Start: t0, End: t0.Add(time.Second)},
		{Label: "b", Class: "running", Start: t0.Add(time.Second)}}, "journal", t0.Add(2*time.Second))
	if len(w.Rows) != 2 || w.Rows[1].X <= w.Rows[0].X || w.Total != "2s" {
		t.Fatalf("%+v", w)
	}
}
