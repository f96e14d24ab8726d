package inbox

import (
	"fmt"
	"slices"

	"github.com/sandgate/sandgate/blueprint"
)

// dag is a blueprint's graph laid out for inline SVG in ranks, top to
// bottom: a node's rank is its longest path from the start, so a long
// chain grows down the page (where it reads at 100 %) instead of into one
// row scaled to nothing.
type dag struct {
	Width, Height int
	Nodes         []dagNode
	Edges         []dagEdge
}

type dagNode struct {
	ID, Type, State string
	Attempts        int
	X, Y, W, H      int
	TX, TY, TY2     int
}

type dagEdge struct {
	Path string
	Back bool
}

const (
	nodeW, nodeH = 150, 46
	gapX, gapY   = 56, 22
	margin       = 16
)

// graphOf lists each node's successors in file order, from the blueprint
// when it parsed, else just the nodes the journal names.
func graphOf(bp *blueprint.Blueprint, v *runView) (order []string, succ map[string][]string, types map[string]string) {
	succ, types = map[string][]string{}, map[string]string{}
	if bp == nil {
		for _, a := range v.Attempts {
			if _, ok := types[a.Node]; !ok {
				types[a.Node] = ""
				order = append(order, a.Node)
			}
		}
		return order, succ, types
	}
	order = bp.Order
	for _, id := range order {
		n := bp.Nodes[id]
		types[id] = n.Type
		for _, e := range n.Edges {
			succ[id] = append(succ[id], e.To)
			if e.OnExhausted != "" {
				succ[id] = append(succ[id], e.OnExhausted)
			}
		}
	}
	if bp.Start != "" && len(order) > 0 && order[0] != bp.Start {
		order = append([]string{bp.Start}, slices.DeleteFunc(slices.Clone(order), func(s string) bool { return s == bp.Start })...)
	}
	return order, succ, types
}

// layers assigns each node the longest path from the start over forward
// edges; an edge back to a node on the DFS stack is a loop and drawn apart.
func layers(order []string, succ map[string][]string) (map[string]int, map[[2]string]bool) {
	back := map[[2]string]bool{}
	state := map[string]int{} // 1 on stack, 2 done
	var dfs func(string)
	dfs = func(u string) {
		state[u] = 1
		for _, w := range succ[u] {
			switch state[w] {
			case 1:
				back[[2]string{u, w}] = true
			case 0:
				dfs(w)
			}
		}
		state[u] = 2
	}
	for _, id := range order {
		if state[id] == 0 {
			dfs(id)
		}
	}
	layer := map[string]int{}
	// Relax forward edges |V| times: the graphs are small and acyclic once
	// back edges are out.
	for range order {
		moved := false
		for _, u := range order {
			for _, w := range succ[u] {
				if !back[[2]string{u, w}] && layer[w] < layer[u]+1 {
					layer[w], moved = layer[u]+1, true
				}
			}
		}
		if !moved {
			break
		}
	}
	return layer, back
}

func layoutDAG(bp *blueprint.Blueprint, v *runView) *dag {
	order, succ, types := graphOf(bp, v)
	layer, back := layers(order, succ)
	count, last := map[string]int{}, map[string]*attempt{}
	for _, a := range v.Attempts {
		count[a.Node]++
		last[a.Node] = a
	}
	g := &dag{}
	pos := map[string]*dagNode{}
	rows := map[int]int{}
	for _, id := range order {
		l := layer[id]
		n := dagNode{ID: id, Type: types[id], Attempts: count[id], W: nodeW, H: nodeH,
			X: margin + rows[l]*(nodeW+gapX), Y: margin + l*(nodeH+gapY)}
		rows[l]++
		n.TX, n.TY, n.TY2 = n.X+10, n.Y+19, n.Y+36
		n.State = nodeState(id, types[id], last[id], v)
		g.Nodes = append(g.Nodes, n)
		g.Width = max(g.Width, n.X+nodeW+margin)
		g.Height = max(g.Height, n.Y+nodeH+margin)
	}
	for i := range g.Nodes {
		pos[g.Nodes[i].ID] = &g.Nodes[i]
	}
	g.Width += 40 // room for loops drawn on the right
	for _, u := range order {
		for _, w := range succ[u] {
			a, b := pos[u], pos[w]
			if a == nil || b == nil {
				continue
			}
			g.Edges = append(g.Edges, edgePath(a, b, back[[2]string{u, w}]))
		}
	}
	return g
}

func edgePath(a, b *dagNode, isBack bool) dagEdge {
	if !isBack {
		x1, y1 := a.X+a.W/2, a.Y+a.H
		x2, y2 := b.X+b.W/2, b.Y
		my := (y1 + y2) / 2
		return dagEdge{Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1, my, x2, my, x2, y2)}
	}
	x1, y1 := a.X+a.W, a.Y+a.H/2
	x2, y2 := b.X+b.W, b.Y+b.H/2+8
	out := max(x1, x2) + 34
	return dagEdge{Back: true, Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, out, y1, out, y2, x2, y2)}
}

// nodeState is the CSS word for a node: its last attempt's state, or for
// a terminal node whether an edge led the run to it.
func nodeState(id, typ string, last *attempt, v *runView) string {
	if blueprint.IsTerminal(typ) {
		if !v.Reached[id] {
			return "pending"
		}
		return map[string]string{blueprint.TypeSucceed: "pass", blueprint.TypeFail: "fail", blueprint.TypeHandoff: "handoff"}[typ]
	}
	if last == nil {
		return "pending"
	}
	return last.State()
}
