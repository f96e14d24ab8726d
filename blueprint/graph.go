package blueprint

import (
	"fmt"
	"strings"
)

// checkGraph runs the whole-graph checks once every node is decoded.
func (d *decoder) checkGraph() {
	bp := d.bp
	ids := bp.Order
	for _, r := range d.refs {
		if _, ok := bp.Nodes[r.to]; !ok && !d.badIDs[r.to] {
			d.r.errorf(r.pos, r.path, "unknown node %q%s", r.to, didYouMean(r.to, ids))
			d.incomplete = true
		}
	}
	if bp.Start != "" && bp.Nodes[bp.Start] == nil && d.nodesRead && !d.badIDs[bp.Start] {
		d.r.errorf(posOf(d.startNode), "start", "start names unknown node %q%s", bp.Start, didYouMean(bp.Start, ids))
	}
	for _, id := range ids {
		d.checkExits(bp.Nodes[id])
	}
	d.checkNeeds()
	// A node with an unreadable key may have lost an edge; judging
	// reachability then would only add noise to the real error.
	if bp.Start != "" && bp.Nodes[bp.Start] != nil && len(d.unsure) == 0 && !d.incomplete {
		seen := reachable(bp, bp.Start)
		for _, id := range ids {
			if !seen[id] {
				d.r.errorf(bp.Nodes[id].Pos, "nodes."+id, "node %s is unreachable from start %s", id, bp.Start)
			}
		}
	}
	if d.checkCycles() && bp.Nodes[bp.Start] != nil && !d.r.diags.HasErrors() {
		bp.WorstCaseRuns = worstCase(bp)
		if b := bp.Budget; b.MaxNodeRuns > 0 && bp.WorstCaseRuns > b.MaxNodeRuns {
			d.r.warnf(b.Pos, "budget.max_node_runs", "worst case is %d node runs, above max_node_runs %d: the budget, not the edge bounds, will end long runs",
				bp.WorstCaseRuns, b.MaxNodeRuns)
		}
	}
}

// checkExits makes sure a non-terminal node has a way out for every outcome.
func (d *decoder) checkExits(n *Node) {
	if IsTerminal(n.Type) || n.Type == "" || d.unsure[n.ID] {
		return
	}
	if _, known := lookupType(d.types, n.Type); !known {
		return
	}
	path := "nodes." + n.ID
	kinds := map[EdgeKind]bool{}
	for _, e := range n.Edges {
		kinds[e.Kind] = true
	}
	switch {
	case len(n.Edges) == 0:
		d.r.errorf(n.Pos, path, "node %s has no way out: add next, on_pass/on_fail or edges", n.ID)
	case kinds[EdgeNext] && (kinds[EdgeOnPass] || kinds[EdgeOnFail] || kinds[EdgeWhen]),
		kinds[EdgeWhen] && (kinds[EdgeOnPass] || kinds[EdgeOnFail]):
		d.r.errorf(n.Pos, path, "use one of next, on_pass/on_fail or edges, not several")
	case kinds[EdgeOnPass] && !kinds[EdgeOnFail]:
		d.r.errorf(n.Pos, path, "no way out when %s fails: add on_fail (to hand off, use a handoff node)", n.ID)
	case kinds[EdgeOnFail] && !kinds[EdgeOnPass]:
		d.r.errorf(n.Pos, path, "no way out when %s passes: add on_pass", n.ID)
	case kinds[EdgeWhen]:
		last := n.Edges[len(n.Edges)-1]
		if last.When != nil {
			d.r.errorf(last.Pos, path+".edges", "no way out when no condition holds: end the list with an edge without when")
		}
		for _, e := range n.Edges[:len(n.Edges)-1] {
			if e.When == nil {
				d.r.errorf(e.Pos, path+".edges", "an edge without when must come last: the edges after it can never be taken")
				break
			}
		}
	}
}

// checkNeeds makes sure a fan-in can complete: each needed node must have an
// edge into the waiting node.
func (d *decoder) checkNeeds() {
	for _, id := range d.bp.Order {
		n := d.bp.Nodes[id]
		for _, need := range n.Needs {
			src := d.bp.Nodes[need]
			if src == nil {
				continue
			}
			feeds := false
			for _, e := range src.Edges {
				feeds = feeds || e.To == id
			}
			if !feeds {
				d.r.errorf(n.Pos, "nodes."+id+".needs", "%s needs %s, but %s has no edge to %s, so %s would wait forever", id, need, need, id, id)
			}
		}
	}
}

// successors lists where a node can go next, with each edge's exhaustion
// target included as an unbounded way on.
func successors(n *Node, includeBounded bool) []string {
	var out []string
	for _, e := range n.Edges {
		if includeBounded || !e.Bounded() {
			out = append(out, e.To)
		}
		if e.OnExhausted != "" {
			out = append(out, e.OnExhausted)
		}
	}
	return out
}

func reachable(bp *Blueprint, start string) map[string]bool {
	seen := map[string]bool{start: true}
	stack := []string{start}
	for len(stack) > 0 {
		n := bp.Nodes[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, to := range successors(n, true) {
			if !seen[to] && bp.Nodes[to] != nil {
				seen[to] = true
				stack = append(stack, to)
			}
		}
	}
	return seen
}

// checkCycles reports every cycle that has no bounded edge on it: such a loop
// could run forever. It returns true when there is none.
func (d *decoder) checkCycles() bool {
	bp := d.bp
	state := map[string]int{} // 0 new, 1 on stack, 2 done
	var stack []string
	ok := true
	var visit func(id string)
	visit = func(id string) {
		state[id] = 1
		stack = append(stack, id)
		for _, to := range successors(bp.Nodes[id], false) {
			if bp.Nodes[to] == nil {
				continue
			}
			switch state[to] {
			case 0:
				visit(to)
			case 1:
				ok = false
				d.reportCycle(stack, to)
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = 2
	}
	for _, id := range bp.Order {
		if state[id] == 0 {
			visit(id)
		}
	}
	return ok
}

func (d *decoder) reportCycle(stack []string, to string) {
	i := len(stack) - 1
	for i > 0 && stack[i] != to {
		i--
	}
	cycle := append(append([]string(nil), stack[i:]...), to)
	last := d.bp.Nodes[stack[len(stack)-1]]
	pos := last.Pos
	for _, e := range last.Edges {
		if e.To == to || e.OnExhausted == to {
			pos = e.Pos
			break
		}
	}
	d.r.errorf(pos, "nodes."+last.ID, "cycle %s has no bounded edge and could loop forever: add max: N to one of its edges",
		strings.Join(cycle, " → "))
}

// worstCase bounds the number of node runs: one unbounded segment from
// start, plus, for every bounded edge, max more segments from its target.
// A segment follows unbounded edges only, and the graph without bounded
// edges is acyclic here.
func worstCase(bp *Blueprint) int {
	memo := map[string]int{}
	var seg func(id string) int
	seg = func(id string) int {
		if v, ok := memo[id]; ok {
			return v
		}
		n := bp.Nodes[id]
		best := 0
		for _, e := range n.Edges {
			var c int
			if !e.Bounded() {
				c = seg(e.To)
			}
			if e.OnExhausted != "" {
				c = max(c, seg(e.OnExhausted))
			}
			if n.FanOut {
				best += c
			} else {
				best = max(best, c)
			}
		}
		memo[id] = 1 + best
		return memo[id]
	}
	total := seg(bp.Start)
	for _, id := range bp.Order {
		for _, e := range bp.Nodes[id].Edges {
			if e.Bounded() && bp.Nodes[e.To] != nil {
				total += e.Max * seg(e.To)
			}
		}
	}
	return total
}

// String renders an edge for messages, e.g. "lint.on_fail → implement (max 3)".
func (e *Edge) String() string {
	s := fmt.Sprintf("%s → %s", e.ID, e.To)
	if e.Max > 0 {
		s += fmt.Sprintf(" (max %d)", e.Max)
	}
	return s
}
