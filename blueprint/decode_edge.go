package blueprint

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// ref is a node name written in the file, to be checked against the nodes.
type ref struct {
	to   string
	pos  Pos
	path string
}

func (d *decoder) refer(to string, pos Pos, path string) {
	d.refs = append(d.refs, ref{to, pos, path})
}

// nextEdges decodes next: a node id, an edge mapping, or a list of ids that
// all run concurrently (fan-out).
func (d *decoder) nextEdges(node *Node, v *yaml.Node, path string) {
	if v.Kind != yaml.SequenceNode {
		d.shortEdge(node, EdgeNext, v, path)
		return
	}
	if len(v.Content) == 0 {
		d.r.errorf(posOf(v), path, "next needs at least one node")
		return
	}
	node.FanOut = len(v.Content) > 1
	for i, item := range v.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		to, ok := d.str(resolveAlias(item), ip)
		if !ok {
			continue
		}
		e := &Edge{ID: fmt.Sprintf("%s.next[%d]", node.ID, i), Kind: EdgeNext, From: node.ID, To: to, Pos: posOf(item)}
		d.refer(to, posOf(item), ip)
		node.Edges = append(node.Edges, e)
	}
}

// shortEdge decodes next, on_pass or on_fail written as an id or as a
// mapping {to, max, on_exhausted}.
func (d *decoder) shortEdge(node *Node, kind EdgeKind, v *yaml.Node, path string) {
	e := &Edge{ID: node.ID + "." + string(kind), Kind: kind, From: node.ID, Pos: posOf(v)}
	if v.Kind == yaml.ScalarNode {
		to, ok := d.str(v, path)
		if !ok {
			return
		}
		e.To = to
		d.refer(to, posOf(v), path)
	} else if !d.edgeMapping(e, v, path, false) {
		return
	}
	node.Edges = append(node.Edges, e)
}

// condEdges decodes the general form: an ordered list of {to, when, max,
// on_exhausted}, first match wins.
func (d *decoder) condEdges(node *Node, v *yaml.Node, path string) {
	v = resolveAlias(v)
	if v.Kind != yaml.SequenceNode {
		d.r.errorf(posOf(v), path, "expected a list of edges, got %s", describe(v))
		return
	}
	if len(v.Content) == 0 {
		d.r.errorf(posOf(v), path, "edges needs at least one entry")
		return
	}
	for i, item := range v.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		e := &Edge{ID: fmt.Sprintf("%s.edges[%d]", node.ID, i), Kind: EdgeWhen, From: node.ID, Pos: posOf(item)}
		if d.edgeMapping(e, resolveAlias(item), ip, true) {
			node.Edges = append(node.Edges, e)
		}
	}
}

// edgeMapping fills e from a mapping; when is allowed only in edges lists.
func (d *decoder) edgeMapping(e *Edge, v *yaml.Node, path string, allowWhen bool) bool {
	keys := edgeKeys
	if !allowWhen {
		keys = plainEdgeKeys
	}
	entries := d.entries(v, path, keys)
	if v.Kind != yaml.MappingNode {
		return false
	}
	hasTo := false
	for _, p := range entries {
		fp := join(path, p.key.Value)
		switch p.key.Value {
		case "to":
			if to, ok := d.str(p.value, fp); ok {
				e.To, hasTo = to, true
				d.refer(to, posOf(p.value), fp)
			}
		case "max":
			e.Max, _ = d.integer(p.value, fp, 1)
		case "on_exhausted":
			if to, ok := d.str(p.value, fp); ok {
				e.OnExhausted = to
				d.refer(to, posOf(p.value), fp)
			}
		case "when":
			if _, ok := d.str(p.value, fp); ok {
				e.When = &Expr{}
				d.exprs = append(d.exprs, pendingExpr{node: p.value, path: fp, edge: e})
			}
		}
	}
	if !hasTo && !d.keyPresent(v, "to") {
		d.r.errorf(posOf(v), path, "an edge needs \"to\"")
	}
	if !hasTo {
		d.unsure[e.From] = true
		return false
	}
	if e.OnExhausted != "" && e.Max == 0 {
		d.r.errorf(posOf(v), path+".on_exhausted", "on_exhausted only applies to an edge with max")
	}
	return hasTo
}
