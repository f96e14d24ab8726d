package blueprint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// posOf returns the position of a YAML node.
func posOf(n *yaml.Node) Pos {
	if n == nil {
		return Pos{}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

// describe names a YAML node's type for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!int":
			return "integer " + n.Value
		case "!!float":
			return "number " + n.Value
		case "!!bool":
			return "boolean " + n.Value
		case "!!null":
			return "nothing (null)"
		}
		return n.Value
	}
	return "unknown YAML"
}

// resolveAlias follows aliases so anchors work like copies.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// pair is one key/value entry of a mapping.
type pair struct {
	key   *yaml.Node
	value *yaml.Node
}

// entries walks a mapping, reporting duplicate keys and keys not in known
// (when known is non-nil), and returns the accepted entries in file order.
func (d *decoder) entries(n *yaml.Node, path string, known []string) []pair {
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		d.r.errorf(posOf(n), path, "expected a mapping, got %s", describe(n))
		return nil
	}
	seen := map[string]*yaml.Node{}
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.Value == "<<" {
			out = append(out, d.entries(v, path, known)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.r.errorf(posOf(k), path, "keys must be plain strings, got %s", describe(k))
			continue
		}
		sub := join(path, k.Value)
		if prev, dup := seen[k.Value]; dup {
			d.r.errorf(posOf(k), sub, "duplicate key %q (first defined at line %d)", k.Value, prev.Line)
			continue
		}
		seen[k.Value] = k
		if known != nil && !contains(known, k.Value) {
			d.unknownKey(k, sub, known)
			continue
		}
		out = append(out, pair{k, v})
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.r.errorf(posOf(n), path, "expected a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) integer(n *yaml.Node, path string, minimum int) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.r.errorf(posOf(n), path, "expected an integer, got %s", describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		d.r.errorf(posOf(n), path, "integer %s is out of range", n.Value)
		return 0, false
	}
	if int(v) < minimum {
		d.r.errorf(posOf(n), path, "must be at least %d, got %d", minimum, v)
		return 0, false
	}
	return int(v), true
}

func (d *decoder) float(n *yaml.Node, path string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") {
		d.r.errorf(posOf(n), path, "expected a number, got %s", describe(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		d.r.errorf(posOf(n), path, "bad number %s", n.Value)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.r.errorf(posOf(n), path, "expected true or false, got %s", describe(n))
		return false, false
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", true
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		d.r.errorf(posOf(n), path, "expected a positive duration like 90s or 20m, got %q", s)
		return 0, false
	}
	return v, true
}

// strList accepts a list of strings, or a single string as a one-item list.
func (d *decoder) strList(n *yaml.Node, path string) ([]string, bool) {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return []string{n.Value}, true
	}
	if n.Kind != yaml.SequenceNode {
		d.r.errorf(posOf(n), path, "expected a list of strings, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		s, good := d.str(resolveAlias(item), fmt.Sprintf("%s[%d]", path, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

func (d *decoder) strMap(n *yaml.Node, path string) (map[string]any, bool) {
	out := map[string]any{}
	ok := true
	for _, p := range d.entries(n, path, nil) {
		s, good := d.str(p.value, join(path, p.key.Value))
		ok = ok && good
		out[p.key.Value] = s
	}
	return out, ok
}

// anyValue decodes an arbitrary YAML value into plain Go values.
func anyValue(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil
	}
	return v
}

// unknownKey reports a key that is not allowed here and remembers the
// suggestion, and the node it belongs to, to keep follow-on errors quiet.
func (d *decoder) unknownKey(k *yaml.Node, path string, known []string) {
	sug := closest(k.Value, known)
	if sug != "" {
		d.suggested[sug] = true
		d.r.errorf(posOf(k), path, "unknown key %q (did you mean %q?)", k.Value, sug)
	} else {
		d.r.errorf(posOf(k), path, "unknown key %q (known keys: %s)", k.Value, strings.Join(known, ", "))
	}
	if parts := strings.Split(path, "."); len(parts) >= 3 && parts[0] == "nodes" {
		d.unsure[parts[1]] = true
	}
}
