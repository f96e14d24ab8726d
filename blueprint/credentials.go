package blueprint

import (
	"fmt"
	neturl "net/url"
	"slices"
	"strings"

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
// allowed or the type trusts. A CredentialEnv field without the endpoint
// would pick which key goes to the operator's endpoint, which only the
// operator may do; a type whose default endpoint is trusted lets it.
func (d *decoder) checkEndpoints(n *Node, nt NodeType, allowed []string) {
	name, f, ok := endpointField(nt)
	if !ok {
		return
	}
	endpoint, _ := n.Config[name].(string)
	var keyFields []string
	for _, k := range sortedKeys(nt.Fields) {
		if v, _ := n.Config[k].(string); v != "" && nt.Fields[k].CredentialEnv {
			keyFields = append(keyFields, k)
		}
	}
	path := "nodes." + n.ID + "."
	switch {
	case endpoint == "" && len(f.Trusted) > 0:
	case endpoint == "":
		for _, k := range keyFields {
			v := n.Config[k].(string)
			d.r.errorf(fieldPos(n, k), path+k,
				"the blueprint picks %s as the key for the operator's endpoint; the operator chooses the key (--api-key-env %s), or the blueprint also sets an endpoint the operator allows (--allow-endpoint URL)", v, v)
		}
	case f.KeyOptional && len(keyFields) == 0, strings.Contains(endpoint, "${{"):
		// No credential goes there, or the node checks the rendered value.
	default:
		if err := CheckEndpoint(f, endpoint, allowed); err != nil {
			d.r.errorf(fieldPos(n, name), path+name, "%v", err)
		}
	}
}

// CheckEndpoint reports why a credential may not go to url through the
// Endpoint field f, or nil when it may: url is an http(s) URL under one of
// f.Trusted or the operator's allowed prefixes (see
// secrets.EndpointAllowed). Nodes call it again on the value they are about
// to use, after templates render and before any connection.
func CheckEndpoint(f Field, url string, allowed []string) error {
	shown := url
	if u, err := neturl.Parse(url); err == nil {
		shown = u.Redacted() // a password written into the URL stays out of the message
	}
	if !secrets.IsHTTPURL(url) {
		return fmt.Errorf("%s is not an http(s) URL, and credentials are sent only over HTTP(S); the harness would not use the credential there: drop it", shown)
	}
	if secrets.EndpointAllowed(url, allowed) || secrets.EndpointAllowed(url, f.Trusted) {
		return nil
	}
	if len(f.Trusted) == 0 {
		return fmt.Errorf("the blueprint would send a credential to %s; credentials go only to endpoints the operator names (--base-url) or allows (--allow-endpoint %s)", shown, shown)
	}
	return fmt.Errorf("the blueprint would send a credential to %s; credentials go only to %s or to URL prefixes the operator allows (--allow-endpoint %s)",
		shown, strings.Join(f.Trusted, ", "), origin(url))
}

// origin is scheme://host of an http(s) URL, the allowance an operator most
// likely means for a git host or API.
func origin(s string) string {
	if u, err := neturl.Parse(s); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return s
}

func endpointField(nt NodeType) (string, Field, bool) {
	for _, k := range sortedKeys(nt.Fields) {
		if nt.Fields[k].Endpoint {
			return k, nt.Fields[k], true
		}
	}
	return "", Field{}, false
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
