package credential

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/blueprint"
)

// Field is the node key that names an issuer.
const Field = "credentials"

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads and checks the node's credentials value: nil and no
// problem when the node has none. Every problem is positioned at the key
// it is about. The private key is read here, so a blueprint whose key
// cannot be read does not load.
func Parse(n *blueprint.Node) (*AppConfig, []blueprint.Diagnostic) {
	v, ok := n.Config[Field]
	if !ok || v == nil {
		return nil, nil
	}
	var ds []blueprint.Diagnostic
	bad := func(path []string, format string, args ...any) {
		ds = append(ds, diag(n, path, fmt.Sprintf(format, args...)))
	}
	top, ok := v.(map[string]any)
	if !ok {
		bad(nil, "want {github_app: {app_id_env, key_file, installation_id}}")
		return nil, ds
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k != "github_app" {
			bad([]string{k}, "unknown issuer %q; the one issuer is github_app", k)
		}
	}
	raw, ok := top["github_app"]
	if !ok {
		bad(nil, "want github_app: {app_id_env, key_file, installation_id}")
		return nil, ds
	}
	app, ok := raw.(map[string]any)
	if !ok {
		bad([]string{"github_app"}, "want {app_id_env, key_file, installation_id}")
		return nil, ds
	}
	c, more := appConfig(n, app)
	return c, append(ds, more...)
}

func appConfig(n *blueprint.Node, app map[string]any) (*AppConfig, []blueprint.Diagnostic) {
	var ds []blueprint.Diagnostic
	bad := func(key, format string, args ...any) {
		ds = append(ds, diag(n, []string{"github_app", key}, fmt.Sprintf(format, args...)))
	}
	var c AppConfig
	for _, k := range slices.Sorted(maps.Keys(app)) {
		v := app[k]
		switch k {
		case "app_id_env":
			if s, _ := v.(string); envNameRE.MatchString(s) {
				c.AppIDEnv = s
			} else {
				bad(k, "want the name of an environment variable holding the app's id, got %v", v)
			}
		case "key_file":
			s, _ := v.(string)
			if !filepath.IsAbs(s) {
				bad(k, "want the absolute path of the app's private key, got %v", v)
			} else if _, err := ReadKey(s); err != nil {
				bad(k, "%v", strings.TrimPrefix(err.Error(), "key_file: "))
			} else if err := checkKeyMode(s); err != nil {
				bad(k, "%v", err)
			}
			c.KeyFile = s
		case "installation_id":
			if id, ok := v.(int); ok && id > 0 {
				c.InstallationID = int64(id)
			} else {
				bad(k, "want the installation's id, a positive number, got %v", v)
			}
		case "base_url":
			if s, _ := v.(string); strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
				c.BaseURL = s
			} else {
				bad(k, "want the API base URL (https://HOST/api/v3 for GitHub Enterprise), got %v", v)
			}
		default:
			bad(k, "unknown key; want app_id_env, key_file, installation_id or base_url")
		}
	}
	for _, k := range []string{"app_id_env", "key_file", "installation_id"} {
		if _, ok := app[k]; !ok {
			ds = append(ds, diag(n, []string{"github_app"}, "github_app needs "+k))
		}
	}
	return &c, ds
}

// diag is a problem at credentials.<path> of node n, pointed at that
// key's value in the file when it can be found, else at the nearest
// enclosing one.
func diag(n *blueprint.Node, path []string, msg string) blueprint.Diagnostic {
	d := n.ErrorAt(Field, -1, "%s", msg)
	if len(path) > 0 {
		d.Path += "." + strings.Join(path, ".")
	}
	v := lookup(n.Raw, Field)
	for _, k := range path {
		if v = lookup(v, k); v == nil {
			break
		}
		d.Line, d.Col = v.Line, v.Column
	}
	return d
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for m != nil && m.Kind == yaml.AliasNode {
		m = m.Alias
	}
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Check is what a node type's Validate adds for its credentials key: the
// problems of Parse and Exclusive.
func Check(n *blueprint.Node) []blueprint.Diagnostic {
	_, ds := Parse(n)
	return append(ds, Exclusive(n)...)
}

// Exclusive refuses a node that names both an issuer and a token_env the
// blueprint set.
func Exclusive(n *blueprint.Node) []blueprint.Diagnostic {
	_, cred := n.Config[Field]
	_, env := n.Config["token_env"]
	if cred && env {
		return []blueprint.Diagnostic{n.ErrorAt("token_env", -1, "token_env and credentials both give this node a token; keep one")}
	}
	return nil
}
