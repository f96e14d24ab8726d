package blueprint

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

func (d *decoder) nodes(n *yaml.Node) {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		d.r.errorf(posOf(n), "nodes", "expected a mapping of node ids to nodes, got %s", describe(n))
		return
	}
	d.nodesRead = true
	if len(n.Content) == 0 {
		d.r.errorf(posOf(n), "nodes", "a blueprint needs at least one node")
	}
	for _, p := range d.entries(n, "nodes", nil) {
		id, path := p.key.Value, "nodes."+p.key.Value
		if !identRE.MatchString(id) {
			d.r.errorf(posOf(p.key), path, "node id %q must match [a-z][a-z0-9_]* so expressions can name it", id)
			d.badIDs[id] = true
			continue
		}
		node := d.node(id, p.key, p.value)
		d.bp.Nodes[id] = node
		d.bp.Order = append(d.bp.Order, id)
	}
}

func (d *decoder) node(id string, key, v *yaml.Node) *Node {
	path := "nodes." + id
	node := &Node{ID: id, Pos: posOf(key), Raw: v, Config: map[string]any{}, Templates: map[string]*Template{}, File: d.bp.File}
	if v.Kind != yaml.MappingNode {
		d.r.errorf(posOf(v), path, "expected a mapping with at least a type, got %s", describe(v))
		return node
	}
	// Read the type first: it decides which other keys are known.
	var nt NodeType
	typeKnown := false
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Value != "type" {
			continue
		}
		tv := v.Content[i+1]
		if s, ok := d.str(tv, path+".type"); ok {
			node.Type = s
			nt, typeKnown = lookupType(d.types, s)
			node.Gate = nt.Gate
			if !typeKnown {
				d.r.errorf(posOf(tv), path+".type", "unknown node type %q%s", s, didYouMean(s, typeNames(d.types)))
			}
		}
	}
	if node.Type == "" && !d.keyPresent(v, "type") {
		d.r.errorf(posOf(key), path, "missing required key \"type\"")
	}
	known := append([]string(nil), commonNodeKeys...)
	known = append(known, sortedKeys(nt.Fields)...)
	var knownArg []string
	if typeKnown {
		knownArg = known
	}
	seenFields := map[string]bool{}
	for _, p := range d.entries(v, path, knownArg) {
		d.nodeEntry(node, nt, p, path)
		seenFields[p.key.Value] = true
	}
	if !typeKnown {
		return node
	}
	for _, name := range sortedKeys(nt.Fields) {
		if nt.Fields[name].Required && !seenFields[name] {
			d.r.errorf(posOf(key), path, "node type %s needs key %q", nt.Name, name)
		}
	}
	if nt.Terminal {
		for i := 0; i+1 < len(v.Content); i += 2 {
			if k := v.Content[i]; contains(edgeNodeKeys, k.Value) || k.Value == "needs" {
				d.r.errorf(posOf(k), path+"."+k.Value, "a %s node ends the run and cannot have %s", nt.Name, k.Value)
			}
		}
		node.Edges = nil
	}
	if nt.Check != nil {
		d.r.adopt(nt.Check(node, v))
	}
	return node
}

func (d *decoder) nodeEntry(node *Node, nt NodeType, p pair, path string) {
	k, v := p.key.Value, p.value
	fp := join(path, k)
	switch k {
	case "type":
	case "description":
		node.Description, _ = d.str(v, fp)
	case "timeout":
		node.Timeout, _ = d.duration(v, fp)
	case "retry":
		for _, r := range d.entries(v, fp, retryKeys) {
			switch r.key.Value {
			case "max":
				node.Retry.Max, _ = d.integer(r.value, fp+".max", 0)
			case "backoff":
				node.Retry.Backoff, _ = d.duration(r.value, fp+".backoff")
			}
		}
	case "needs":
		node.Needs, _ = d.strList(v, fp)
		for i, t := range node.Needs {
			d.refer(t, itemPos(v, i), fmt.Sprintf("%s[%d]", fp, i))
		}
	case "next":
		d.nextEdges(node, v, fp)
	case "on_pass":
		d.shortEdge(node, EdgeOnPass, v, fp)
	case "on_fail":
		d.shortEdge(node, EdgeOnFail, v, fp)
	case "edges":
		d.condEdges(node, v, fp)
	default:
		d.field(node, nt.Fields[k], k, v, fp)
	}
}

// field decodes one type-specific configuration field by its declared kind.
func (d *decoder) field(node *Node, f Field, name string, v *yaml.Node, path string) {
	var val any
	ok := false
	switch f.Kind {
	case KindString:
		val, ok = d.str(v, path)
		if ok && len(f.Enum) > 0 && !contains(f.Enum, val.(string)) {
			d.r.errorf(posOf(v), path, "must be one of %v, got %q%s", f.Enum, val, didYouMean(val.(string), f.Enum))
		}
	case KindInt:
		val, ok = d.integer(v, path, 0)
	case KindFloat:
		val, ok = d.float(v, path)
	case KindBool:
		val, ok = d.boolean(v, path)
	case KindDuration:
		val, ok = d.duration(v, path)
	case KindStringList:
		val, ok = d.strList(v, path)
	case KindStringMap:
		val, ok = d.strMap(v, path)
	case KindCommand, KindCommandList:
		// Commands handle their own templates (argv form only).
		if f.Kind == KindCommand {
			val, ok = d.command(node, name, v, path)
		} else {
			val, ok = d.commandList(node, name, v, path)
		}
		if ok {
			node.Config[name] = val
		}
		return
	default:
		val, ok = anyValue(v), true
	}
	if !ok {
		return
	}
	node.Config[name] = val
	d.templatesIn(node, name, f, v, path)
}

// maxWalk bounds how many YAML values the template scan visits.
const maxWalk = 100000

// templatesIn queues every ${{ }} template inside a field's strings.
func (d *decoder) templatesIn(node *Node, name string, f Field, v *yaml.Node, path string) {
	// Aliases can make a small file a huge tree ("billion laughs"): stop
	// walking after a fixed number of values.
	if d.walked++; d.walked > maxWalk {
		if d.walked == maxWalk+1 {
			d.r.errorf(posOf(v), path, "too many values (aliases expand to more than %d): simplify the anchors", maxWalk)
		}
		return
	}
	v = resolveAlias(v)
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() != "!!str" || !strings.Contains(v.Value, "${{") {
			return
		}
		if f.NoTemplate {
			d.r.errorf(posOf(v), path, "templates are not allowed in %s: its value must not depend on inputs or model output", name)
			return
		}
		d.exprs = append(d.exprs, pendingExpr{node: v, path: path, owner: node, field: name})
	case yaml.SequenceNode:
		for i, item := range v.Content {
			d.templatesIn(node, fmt.Sprintf("%s[%d]", name, i), f, item, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i].Value
			d.templatesIn(node, name+"."+k, f, v.Content[i+1], path+"."+k)
		}
	}
}
