package blueprint

import (
	"fmt"
	"slices"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/secrets"
)

// WithAllowEnv lets the named credentials into the box through
// sandbox.env: the operator's --allow-env. Without it a blueprint that
// passes a credential into the box does not load.
func WithAllowEnv(names ...string) Option {
	return func(o *options) { o.allowEnv = append(o.allowEnv, names...) }
}

// WithAllowEndpoints lets blueprints name these URLs as Endpoint fields
// (an agent's base_url), together with the key to send there: the
// operator's --allow-endpoint. Without it a blueprint that sets base_url or
// api_key_env does not load.
func WithAllowEndpoints(urls ...string) Option {
	return func(o *options) { o.allowEndpoints = append(o.allowEndpoints, urls...) }
}

// IsCredential reports whether the variable name holds a credential for
// this blueprint: a node names it in a CredentialEnv field, or its name
// looks like one (see secrets.IsCredentialName).
func (bp *Blueprint) IsCredential(name string) bool {
	return secrets.IsCredentialName(name) || slices.Contains(bp.Credentials, name)
}

// BoxedCredentials lists the sandbox.env entries that are credentials not
// in allow, by their index in Sandbox.Env. The loader refuses them; the
// environment that starts the box checks again, so a Blueprint built or
// changed after loading cannot slip one through.
func (bp *Blueprint) BoxedCredentials(allow []string) []int {
	var out []int
	for i, name := range bp.Sandbox.Env {
		if bp.IsCredential(name) && !slices.Contains(allow, name) {
			out = append(out, i)
		}
	}
	return out
}

// checkCredentials collects the nodes' credential variables and enforces
// the operator's allowances: no credential in the box, no key to an
// endpoint the operator did not allow.
func (d *decoder) checkCredentials(o options) {
	bp := d.bp
	names := map[string]bool{}
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		nt, ok := lookupType(d.types, n.Type)
		if !ok {
			continue
		}
		for _, f := range sortedKeys(nt.Fields) {
			if v, _ := n.Config[f].(string); v != "" && nt.Fields[f].CredentialEnv {
				names[v] = true
			}
		}
		d.checkEndpoints(n, nt, o.allowEndpoints)
	}
	bp.Credentials = sortedKeys(names)
	for _, i := range bp.BoxedCredentials(o.allowEnv) {
		name := bp.Sandbox.Env[i]
		why := "looks like a credential"
		if names[name] && !secrets.IsCredentialName(name) {
			why = "is a credential (a node names it as token_env or api_key_env)"
		}
		var pos Pos
		if i < len(bp.Sandbox.EnvPos) {
			pos = bp.Sandbox.EnvPos[i]
		}
		d.r.errorf(pos, fmt.Sprintf("sandbox.env[%d]", i),
			"%s %s; the harness does not pass credentials into the box unless the operator allows it (--allow-env %s)", name, why, name)
	}
}

// checkEndpoints refuses Endpoint and CredentialEnv fields of a node type
// that has an Endpoint field, unless the endpoint is one the operator
// allowed. A CredentialEnv field without the endpoint would pick which key
// goes to the operator's endpoint, which only the operator may do.
func (d *decoder) checkEndpoints(n *Node, nt NodeType, allowed []string) {
	var endpoint, endpointField string
	var keyFields []string
	for _, f := range sortedKeys(nt.Fields) {
		v, _ := n.Config[f].(string)
		switch {
		case nt.Fields[f].Endpoint && v != "":
			endpoint, endpointField = v, f
		case nt.Fields[f].CredentialEnv && v != "":
			keyFields = append(keyFields, f)
		}
	}
	if endpointField == "" && !hasEndpointField(nt) {
		return
	}
	path := "nodes." + n.ID + "."
	if endpointField != "" {
		if !secrets.EndpointAllowed(endpoint, allowed) {
			d.r.errorf(fieldPos(n, endpointField), path+endpointField,
				"the blueprint would send a credential to %s; credentials go only to endpoints the operator names (--base-url) or allows (--allow-endpoint %s)", endpoint, endpoint)
		}
		return
	}
	sort.Strings(keyFields)
	for _, f := range keyFields {
		v := n.Config[f].(string)
		d.r.errorf(fieldPos(n, f), path+f,
			"the blueprint picks %s as the key for the operator's endpoint; the operator chooses the key (--api-key-env %s), or the blueprint also sets an endpoint the operator allows (--allow-endpoint URL)", v, v)
	}
}

func hasEndpointField(nt NodeType) bool {
	for _, f := range nt.Fields {
		if f.Endpoint {
			return true
		}
	}
	return false
}

// fieldPos is the position of a node field's value, or of the node.
func fieldPos(n *Node, field string) Pos {
	m := resolveAlias(n.Raw)
	if m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == field {
				return posOf(m.Content[i+1])
			}
		}
	}
	return n.Pos
}
