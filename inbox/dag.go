package inbox

import (
	"slices"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/draw"
	"github.com/sandgate/sandgate/inbox/index"
)

// graphOf lists each node's successors in file order, from the blueprint
// when it parsed, else just the nodes the journal names.
func graphOf(bp *blueprint.Blueprint, v *index.View) (order []string, succ map[string][]string, types map[string]string) {
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

func layoutDAG(bp *blueprint.Blueprint, v *index.View) *draw.DAG {
	order, succ, types := graphOf(bp, v)
	count, last := map[string]int{}, map[string]*index.Attempt{}
	for _, a := range v.Attempts {
		count[a.Node]++
		last[a.Node] = a
	}
	return draw.Layout(order, succ, types, func(id string) (string, int) {
		return nodeState(id, types[id], last[id], v), count[id]
	})
}

// nodeState is the CSS word for a node: its last attempt's state, or for
// a terminal node whether an edge led the run to it.
func nodeState(id, typ string, last *index.Attempt, v *index.View) string {
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
