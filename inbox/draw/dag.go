package draw

import "fmt"

// DAG is a blueprint's graph laid out for inline SVG in ranks, top to
// bottom: a node's rank is its longest path from the start, so a long
// chain grows down the page (where it reads at 100 %) instead of into one
// row scaled to nothing.
type DAG struct {
	Width, Height int
	Nodes         []Node
	Edges         []Edge
}

type Node struct {
	ID, Type, State string
	Attempts        int
	X, Y, W, H      int
	TX, TY, TY2     int
}

type Edge struct {
	Path string
	Back bool
}

const (
	nodeW, nodeH = 150, 46
	gapX, gapY   = 56, 22
	margin       = 16
)

// Layout draws a graph: order lists the nodes (the start first), succ
// each node's successors, types their types, and state says each node's
// state word and attempt count.
func Layout(order []string, succ map[string][]string, types map[string]string, state func(id string) (string, int)) *DAG {
	layer, back := layers(order, succ)
	g := &DAG{}
	pos := map[string]*Node{}
	rows := map[int]int{}
	for _, id := range order {
		l := layer[id]
		st, n := state(id)
		nd := Node{ID: id, Type: types[id], State: st, Attempts: n, W: nodeW, H: nodeH,
			X: margin + rows[l]*(nodeW+gapX), Y: margin + l*(nodeH+gapY)}
		rows[l]++
		nd.TX, nd.TY, nd.TY2 = nd.X+10, nd.Y+19, nd.Y+36
		g.Nodes = append(g.Nodes, nd)
		g.Width = max(g.Width, nd.X+nodeW+margin)
		g.Height = max(g.Height, nd.Y+nodeH+margin)
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

func edgePath(a, b *Node, isBack bool) Edge {
	if !isBack {
		x1, y1 := a.X+a.W/2, a.Y+a.H
		x2, y2 := b.X+b.W/2, b.Y
		my := (y1 + y2) / 2
		return Edge{Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1, my, x2, my, x2, y2)}
	}
	x1, y1 := a.X+a.W, a.Y+a.H/2
	x2, y2 := b.X+b.W, b.Y+b.H/2+8
	out := max(x1, x2) + 34
	return Edge{Back: true, Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, out, y1, out, y2, x2, y2)}
}
