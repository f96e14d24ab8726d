package blueprint

import (
	"sort"

	"gopkg.in/yaml.v3"
)

// Kind is the type of a configuration field or output field.
type Kind string

// Field kinds. KindAny accepts any YAML value and is typed as "any" in
// expressions.
const (
	KindString     Kind = "string"
	KindInt        Kind = "int"
	KindFloat      Kind = "float"
	KindBool       Kind = "bool"
	KindDuration   Kind = "duration"
	KindStringList Kind = "string_list"
	KindStringMap  Kind = "string_map"
	KindAny        Kind = "any"
)

// Field describes one configuration field of a node type.
type Field struct {
	Kind     Kind
	Required bool
	// Doc is a one-line description, used in the JSON Schema and docs.
	Doc string
	// Enum, when set, lists the allowed values of a string field.
	Enum []string
	// NoTemplate forbids ${{ }} templates in the field, for values that must
	// not be shaped by inputs or model output (commands, paths).
	NoTemplate bool
	// CredentialEnv marks a field that names a harness environment
	// variable holding a credential (token_env, api_key_env). That
	// variable never enters the box unless the operator allows it
	// (WithAllowEnv), and its value is redacted from what a run writes.
	CredentialEnv bool
	// Endpoint marks a URL the node sends its credential to (an agent's
	// base_url). A blueprint may set it, or the type's CredentialEnv
	// fields, only for an endpoint the operator allows
	// (WithAllowEndpoints): a key never goes where the operator did not say.
	// The loader checks a literal value; a templated one (only where the
	// field allows templates) is the node's to check once it renders.
	Endpoint bool
	// Trusted lists URL prefixes an Endpoint field may name without the
	// operator's allowance: GitHub's own hosts for a GitHub token. A type
	// with Trusted prefixes defaults the field to one of them, so its
	// CredentialEnv fields may be set without the endpoint.
	Trusted []string
	// KeyOptional marks an Endpoint field the node sends a credential to
	// only when a CredentialEnv field names one (git_push's remote): without
	// one the field is not checked.
	KeyOptional bool
	// Default is the value, as written in YAML, a node gets when it leaves
	// the key out (or sets it to the zero value); shown in the schema and
	// docs, applied by [Decode].
	Default string
}

// NodeType describes a node type to the validator. The runtime's registry
// provides these; the blueprint package never executes anything.
type NodeType struct {
	Name string
	// Doc is a one-line description of the type.
	Doc string
	// Fields are the type-specific configuration keys.
	Fields map[string]Field
	// Outputs are the fields the node publishes as outputs.<id>.<field>.
	Outputs map[string]Kind
	// Terminal types end the run and take no edges.
	Terminal bool
	// Stage names the harness stage the type belongs to (propose, verify,
	// promote), recorded on its spans so a trace reads like the harness.
	Stage string
	// Gate marks a type whose nodes judge the change: each run's verdict
	// is recorded against the change it saw (keyed by node id), and a
	// promotion node that a gate node can reach refuses to let the change
	// leave until that verdict passes on the change as it is. The node
	// reports its judgement through its Outcome (pass or not), Reason and
	// optional Details; the harness, not the node, ties it to the change.
	Gate bool
	// Check, when set, runs after the generic field checks and returns
	// extra diagnostics; cfg is the node's whole YAML mapping.
	Check func(n *Node, cfg *yaml.Node) []Diagnostic
}

// TypeSet resolves node type names. The runtime registry implements it.
type TypeSet interface {
	// NodeType returns the type named name.
	NodeType(name string) (NodeType, bool)
	// NodeTypeNames lists every known type name, for suggestions.
	NodeTypeNames() []string
}

// builtinTypes are the terminal types every blueprint can use.
var builtinTypes = map[string]NodeType{
	TypeSucceed: {Name: TypeSucceed, Doc: "ends the run as succeeded", Terminal: true},
	TypeHandoff: {Name: TypeHandoff, Doc: "ends the run handed off to a human", Terminal: true,
		Fields: map[string]Field{"reason": {Kind: KindString, Doc: "why a person must take over"}}},
	TypeFail: {Name: TypeFail, Doc: "ends the run as failed", Terminal: true,
		Fields: map[string]Field{"reason": {Kind: KindString, Doc: "why the run failed"}}},
}

// BuiltinTypes returns the terminal node types that are part of the format.
func BuiltinTypes() []NodeType {
	out := make([]NodeType, 0, len(builtinTypes))
	for _, t := range builtinTypes {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookupType finds a type among the built-ins and then in ts.
func lookupType(ts TypeSet, name string) (NodeType, bool) {
	if t, ok := builtinTypes[name]; ok {
		return t, true
	}
	if ts == nil {
		return NodeType{}, false
	}
	return ts.NodeType(name)
}

// typeNames lists the built-in names and those of ts.
func typeNames(ts TypeSet) []string {
	names := make([]string, 0, len(builtinTypes))
	for n := range builtinTypes {
		names = append(names, n)
	}
	if ts != nil {
		names = append(names, ts.NodeTypeNames()...)
	}
	sort.Strings(names)
	return names
}

// MapTypes is a simple TypeSet backed by a map, handy for tests and tools.
type MapTypes map[string]NodeType

// NodeType implements TypeSet.
func (m MapTypes) NodeType(name string) (NodeType, bool) { t, ok := m[name]; return t, ok }

// NodeTypeNames implements TypeSet.
func (m MapTypes) NodeTypeNames() []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
