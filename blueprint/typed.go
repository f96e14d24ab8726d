package blueprint

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// Typed node configuration: a node type declares its keys once, as a Go
// struct, and that one declaration drives validation, the JSON Schema, the
// docs and decoding. Each exported field with an `sg` tag is a key:
//
//	type TestConfig struct {
//		Run    blueprint.Command `sg:"run,required,notemplate" doc:"test command"`
//		Format string            `sg:"format,enum=auto|go-json|junit|tap,default=auto" doc:"report format"`
//		Rerun  *int              `sg:"rerun_failed" doc:"re-run failures up to N times"`
//	}
//
// The tag is the key name followed by options: required, notemplate,
// credential (Field.CredentialEnv), endpoint, keyoptional, enum=a|b,
// trusted=prefix|prefix, default=value and kind=name (for a Go type the
// kind is not derived from). The Go type gives the kind: string, int,
// float64, bool, time.Duration, []string, map[string]string, Command,
// []Command, or a pointer to one of those, which stays nil when the key is
// absent. A struct implementing [Validator] gets it run as the type's Check.

// Command is a decoded KindCommand value: a shell line or an argv, and
// the key its templates are filed under (Field), e.g. "run" or "run[1]".
type Command struct {
	Field string
	Line  string
	Argv  Argv
}

// Validator is implemented by a configuration struct whose values need
// checks beyond kinds, required keys and enums. Validate runs when a
// blueprint loads and before a factory builds the node, on the decoded,
// defaulted struct; n positions diagnostics at a field (n.ErrorAt).
type Validator interface {
	Validate(n *Node) []Diagnostic
}

// Configured returns t with its Fields derived from the tags of T and,
// when T (or *T) implements [Validator], its Check set to decode the node
// and validate it. It panics on a malformed tag: declarations are code,
// and a broken one must fail the first test that loads it.
func Configured[T any](t NodeType) NodeType {
	s := mustSchema(reflect.TypeFor[T]())
	t.Fields = make(map[string]Field, len(s))
	for _, sf := range s {
		t.Fields[sf.name] = sf.Field
	}
	var zero T
	if _, ok := any(&zero).(Validator); ok {
		t.Check = func(n *Node, _ *yaml.Node) []Diagnostic {
			c := decodeInto[T](n, s)
			return any(&c).(Validator).Validate(n)
		}
	}
	return t
}

// Decode returns n's configuration as T, defaults applied. It fails, naming
// the key, when a value is not of the declared kind, a required key is
// missing or a value is outside its enum — a node assembled in Go can
// hold anything — so a factory never sees a value validation would refuse.
// It does not run T's Validator; validation and the registry's guard do.
func Decode[T any](n *Node) (T, error) {
	s := mustSchema(reflect.TypeFor[T]())
	t := NodeType{Name: n.Type, Fields: make(map[string]Field, len(s))}
	for _, sf := range s {
		t.Fields[sf.name] = sf.Field
	}
	if err := ConfigError(CheckConfig(t, n)); err != nil {
		var zero T
		return zero, err
	}
	return decodeInto[T](n, s), nil
}

// schemaField is one tagged struct field.
type schemaField struct {
	Field
	name  string
	index int
	def   reflect.Value // parsed default; invalid when none
}

var schemas sync.Map // reflect.Type -> []schemaField

func mustSchema(rt reflect.Type) []schemaField {
	if s, ok := schemas.Load(rt); ok {
		return s.([]schemaField)
	}
	s, err := schemaOf(rt)
	if err != nil {
		panic(fmt.Sprintf("blueprint: config %v: %v", rt, err))
	}
	schemas.Store(rt, s)
	return s
}

func schemaOf(rt reflect.Type) ([]schemaField, error) {
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("want a struct, got %v", rt.Kind())
	}
	var out []schemaField
	seen := map[string]bool{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, ok := f.Tag.Lookup("sg")
		if !ok || tag == "-" {
			continue
		}
		sf, err := parseTag(f, tag)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if seen[sf.name] {
			return nil, fmt.Errorf("field %s: key %q declared twice", f.Name, sf.name)
		}
		seen[sf.name] = true
		sf.index = i
		out = append(out, sf)
	}
	return out, nil
}

// parseTag reads one field's sg and doc tags.
func parseTag(f reflect.StructField, tag string) (schemaField, error) {
	parts := strings.Split(tag, ",")
	sf := schemaField{name: parts[0], Field: Field{Doc: f.Tag.Get("doc")}}
	if sf.name == "" || !f.IsExported() {
		return sf, fmt.Errorf("needs a key name and must be exported")
	}
	var def string
	hasDef := false
	for _, p := range parts[1:] {
		opt, val, _ := strings.Cut(p, "=")
		switch opt {
		case "required":
			sf.Required = true
		case "notemplate":
			sf.NoTemplate = true
		case "credential":
			sf.CredentialEnv = true
		case "endpoint":
			sf.Endpoint = true
		case "keyoptional":
			sf.KeyOptional = true
		case "enum":
			sf.Enum = strings.Split(val, "|")
		case "trusted":
			sf.Trusted = strings.Split(val, "|")
		case "default":
			def, hasDef = val, true
		case "kind":
			sf.Kind = Kind(val)
		default:
			return sf, fmt.Errorf("unknown tag option %q", opt)
		}
	}
	if sf.Kind == "" {
		k, ok := kindOfType(f.Type)
		if !ok {
			return sf, fmt.Errorf("no kind for Go type %v: add kind=", f.Type)
		}
		sf.Kind = k
	}
	if hasDef {
		v, err := parseDefault(f.Type, def)
		if err != nil {
			return sf, fmt.Errorf("default %q: %w", def, err)
		}
		sf.Default, sf.def = def, v
	}
	return sf, nil
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	commandType  = reflect.TypeFor[Command]()
)

// kindOfType derives a field's kind from its Go type.
func kindOfType(t reflect.Type) (Kind, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return KindDuration, true
	case t == commandType:
		return KindCommand, true
	case t == reflect.TypeFor[[]Command]():
		return KindCommandList, true
	case t == reflect.TypeFor[[]string]():
		return KindStringList, true
	case t == reflect.TypeFor[map[string]string]():
		return KindStringMap, true
	}
	switch t.Kind() {
	case reflect.String:
		return KindString, true
	case reflect.Int:
		return KindInt, true
	case reflect.Float64:
		return KindFloat, true
	case reflect.Bool:
		return KindBool, true
	case reflect.Interface:
		return KindAny, true
	}
	return "", false
}

// parseDefault turns a tag's default into a value of the field's type.
func parseDefault(t reflect.Type, s string) (reflect.Value, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var v any
	var err error
	switch {
	case t == durationType:
		v, err = time.ParseDuration(s)
	case t.Kind() == reflect.String:
		v = s
	case t.Kind() == reflect.Int:
		v, err = strconv.Atoi(s)
	case t.Kind() == reflect.Float64:
		v, err = strconv.ParseFloat(s, 64)
	case t.Kind() == reflect.Bool:
		v, err = strconv.ParseBool(s)
	default:
		return reflect.Value{}, fmt.Errorf("defaults are for scalar fields")
	}
	if err != nil {
		return reflect.Value{}, err
	}
	return reflect.ValueOf(v).Convert(t), nil
}

// decodeInto fills a T from n.Config, skipping values of the wrong Go
// type (CheckConfig reports those), and applies defaults to absent or zero
// values.
func decodeInto[T any](n *Node, s []schemaField) T {
	var out T
	rv := reflect.ValueOf(&out).Elem()
	for _, sf := range s {
		dst := rv.Field(sf.index)
		v, ok := n.Config[sf.name]
		if ok {
			setValue(dst, sf.name, v)
		}
		if sf.def.IsValid() && dst.IsZero() {
			setValue(dst, sf.name, sf.def.Interface())
		}
	}
	return out
}

// setValue stores a decoded config value into dst when its type fits.
func setValue(dst reflect.Value, key string, v any) {
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		if k, _ := kindOfType(p.Elem().Type()); kindHolds(k, v) {
			setValue(p.Elem(), key, v)
			dst.Set(p)
		}
		return
	}
	switch {
	case dst.Type() == commandType:
		if c, ok := commandValue(key, v); ok {
			dst.Set(reflect.ValueOf(c))
		}
	case dst.Type() == reflect.TypeFor[[]Command]():
		items, _ := v.([]any)
		var cs []Command
		for i, it := range items {
			if c, ok := commandValue(fmt.Sprintf("%s[%d]", key, i), it); ok {
				cs = append(cs, c)
			}
		}
		dst.Set(reflect.ValueOf(cs))
	case dst.Type() == reflect.TypeFor[map[string]string]():
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]string, len(m))
			for k, x := range m {
				out[k] = fmt.Sprint(x)
			}
			dst.Set(reflect.ValueOf(out))
		}
	case fits(dst.Type(), v):
		dst.Set(reflect.ValueOf(v).Convert(dst.Type()))
	}
}

// fits reports whether v converts to t without changing its meaning.
func fits(t reflect.Type, v any) bool {
	if v == nil {
		return false
	}
	vt := reflect.TypeOf(v)
	if t.Kind() == reflect.Interface {
		return vt.Implements(t)
	}
	if vt == t {
		return true
	}
	// Named types of the same kind (a string enum type) convert; a
	// Duration is never taken for a plain int64 or the reverse.
	return vt.Kind() == t.Kind() && vt != durationType && t != durationType && vt.ConvertibleTo(t)
}

// commandValue converts a decoded command (string or Argv).
func commandValue(key string, v any) (Command, bool) {
	switch c := v.(type) {
	case string:
		return Command{Field: key, Line: c}, true
	case Argv:
		return Command{Field: key, Argv: c}, true
	}
	return Command{}, false
}
