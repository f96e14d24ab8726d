package blueprint

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ErrorAt returns an error diagnostic about the node, for a [NodeType.Check]
// hook. With field set it names that field and points at its value, and
// with item >= 0 at that item of a list value; an absent field (or a node
// built in Go, without Raw) is pointed at by the node's own key. File and snippet are filled
// in when the diagnostic is reported.
func (n *Node) ErrorAt(field string, item int, format string, args ...any) Diagnostic {
	path, pos := "nodes."+n.ID, n.Pos
	if field != "" {
		path += "." + field
		if item >= 0 {
			path = fmt.Sprintf("%s[%d]", path, item)
		}
		if v := fieldValue(n.Raw, field, 0); v != nil {
			pos = posOf(v)
			if item >= 0 {
				pos = itemPos(v, item)
			}
		}
	}
	return Diagnostic{File: n.File, Line: pos.Line, Col: pos.Col, Path: path,
		Severity: SeverityError, Message: fmt.Sprintf(format, args...)}
}

// fieldValue finds a key's value in a node mapping, following aliases and
// "<<" merge keys the way decoding does. depth bounds merge recursion.
func fieldValue(m *yaml.Node, key string, depth int) *yaml.Node {
	m = resolveAlias(m)
	if m == nil || m.Kind != yaml.MappingNode || depth > 32 {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Value == key && k.Kind == yaml.ScalarNode {
			return v
		}
		if k.Value != "<<" {
			continue
		}
		merged := []*yaml.Node{v}
		if rv := resolveAlias(v); rv.Kind == yaml.SequenceNode {
			merged = rv.Content
		}
		for _, src := range merged {
			if found := fieldValue(src, key, depth+1); found != nil {
				return found
			}
		}
	}
	return nil
}

// Suggest returns a " (did you mean "x"?)" suffix naming the candidate
// closest to s, or "" when none is a plausible typo, so node type checks
// phrase suggestions the way the rest of validation does.
func Suggest(s string, candidates []string) string { return didYouMean(s, candidates) }

// CheckConfig runs every check validation runs on one node's configuration
// — the Go type of each declared field, required fields, enums and the
// type's Check hook — without the YAML. Factories call it before building a
// node, so a node assembled in Go, or validated against another type set,
// is refused for exactly the reasons validation would refuse it, and never
// panics on a value of the wrong type.
func CheckConfig(t NodeType, n *Node) Diagnostics {
	var ds Diagnostics
	for _, name := range sortedKeys(t.Fields) {
		f := t.Fields[name]
		v, ok := n.Config[name]
		switch {
		case !ok && f.Required:
			ds = append(ds, n.ErrorAt("", -1, "node type %s needs key %q", t.Name, name))
		case ok && !kindHolds(f.Kind, v):
			ds = append(ds, n.ErrorAt(name, -1, "expected %s, got %T", f.Kind, v))
		case ok && len(f.Enum) > 0 && !contains(f.Enum, v.(string)):
			ds = append(ds, n.ErrorAt(name, -1, "must be one of %v, got %q%s", f.Enum, v, didYouMean(v.(string), f.Enum)))
		}
	}
	if len(ds) == 0 && t.Check != nil {
		ds = append(ds, t.Check(n, n.Raw)...)
	}
	for i := range ds {
		if ds[i].Severity == "" {
			ds[i].Severity = SeverityError
		}
	}
	return ds.Errors()
}

// kindHolds reports whether v is the Go value decoding gives a field of
// kind k.
func kindHolds(k Kind, v any) bool {
	switch k {
	case KindString:
		_, ok := v.(string)
		return ok
	case KindInt:
		_, ok := v.(int)
		return ok
	case KindFloat:
		_, ok := v.(float64)
		return ok
	case KindBool:
		_, ok := v.(bool)
		return ok
	case KindDuration:
		_, ok := v.(time.Duration)
		return ok
	case KindStringList:
		_, ok := v.([]string)
		return ok
	case KindStringMap:
		_, ok := v.(map[string]any)
		return ok
	case KindCommand:
		return isCommand(v)
	case KindCommandList:
		l, ok := v.([]any)
		for _, c := range l {
			ok = ok && isCommand(c)
		}
		return ok
	}
	return true
}

// isCommand reports whether v is a decoded command: a shell line or a
// non-empty Argv.
func isCommand(v any) bool {
	switch c := v.(type) {
	case string:
		return true
	case Argv:
		return len(c) > 0
	}
	return false
}

// ConfigError turns the diagnostics of [CheckConfig] into one error for a
// factory to return; the runtime prefixes the node's position. It is nil
// when ds holds no error.
func ConfigError(ds Diagnostics) error {
	var parts []string
	for _, d := range ds.Errors() {
		field := strings.TrimPrefix(d.Path, "nodes.")
		if i := strings.IndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		} else {
			field = ""
		}
		if field != "" {
			parts = append(parts, field+": "+d.Message)
		} else {
			parts = append(parts, d.Message)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}
