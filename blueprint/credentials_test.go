package blueprint_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// keyedTypes declare credential and endpoint fields the way the built-in
// agent and git_push types do.
var keyedTypes = blueprint.MapTypes{
	"agent": {Name: "agent", Fields: map[string]blueprint.Field{
		"prompt":      {Kind: blueprint.KindString},
		"base_url":    {Kind: blueprint.KindString, Endpoint: true},
		"api_key_env": {Kind: blueprint.KindString, CredentialEnv: true},
	}},
	"git_push": {Name: "git_push", Fields: map[string]blueprint.Field{
		"remote":    {Kind: blueprint.KindString},
		"token_env": {Kind: blueprint.KindString, CredentialEnv: true},
	}},
}

const credBlueprint = `version: 1
name: creds
sandbox:
  env: [GOFLAGS, ENVS]
start: a
nodes:
  a:
    type: agent
    prompt: hi
AGENT
    next: push
  push: {type: git_push, remote: /tmp/r, token_env: PUSH_CRED, next: done}
  done: {type: succeed}
`

func TestCredentialsNeedTheOperator(t *testing.T) {
	const url = "http://127.0.0.1:9/v1"
	cases := []struct {
		name, envs, agent string
		opts              []blueprint.Option
		want              []string // "line:col: path: fragment"; empty means loads
	}{
		{"credential by name", "GITHUB_TOKEN", "", nil,
			[]string{"4:18: sandbox.env[1]: GITHUB_TOKEN looks like a credential; the harness does not pass credentials into the box unless the operator allows it (--allow-env GITHUB_TOKEN)"}},
		{"credential a node names", "PUSH_CRED", "", nil,
			[]string{"4:18: sandbox.env[1]: PUSH_CRED is a credential (a node names it as token_env or api_key_env)"}},
		{"lower case word part", "aws_secret_access_key", "", nil, []string{"4:18: sandbox.env[1]: aws_secret_access_key looks like"}},
		{"allowed by the operator", "GITHUB_TOKEN", "", []blueprint.Option{blueprint.WithAllowEnv("GITHUB_TOKEN")}, nil},
		{"not a credential", "MONKEY", "", nil, nil},
		{"key without endpoint", "HOME", "    api_key_env: GITHUB_TOKEN", nil,
			[]string{"10:18: nodes.a.api_key_env: the blueprint picks GITHUB_TOKEN as the key for the operator's endpoint"}},
		{"endpoint not allowed", "HOME", "    base_url: " + url + "\n    api_key_env: GITHUB_TOKEN", nil,
			[]string{"10:15: nodes.a.base_url: the blueprint would send a credential to " + url + "; credentials go only to endpoints the operator names (--base-url) or allows (--allow-endpoint " + url + ")"}},
		{"endpoint allowed", "HOME", "    base_url: " + url + "/\n    api_key_env: GITHUB_TOKEN", []blueprint.Option{blueprint.WithAllowEndpoints(url)}, nil},
		{"look-alike endpoint", "HOME", "    base_url: " + url + "x", []blueprint.Option{blueprint.WithAllowEndpoints(url)}, []string{"nodes.a.base_url: the blueprint would send"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.NewReplacer("ENVS", c.envs, "AGENT\n", c.agent+"\n").Replace(credBlueprint)
			src = strings.Replace(src, "\n\n", "\n", 1)
			opts := append([]blueprint.Option{blueprint.WithTypes(keyedTypes)}, c.opts...)
			bp, err := blueprint.Parse("creds.yaml", []byte(src), opts...)
			if c.want == nil {
				if err != nil {
					t.Fatalf("want it to load: %v\n%s", err, src)
				}
				if got := strings.Join(bp.Credentials, ","); got != "PUSH_CRED" && got != "GITHUB_TOKEN,PUSH_CRED" {
					t.Fatalf("credentials %s", got)
				}
				return
			}
			var ds blueprint.Diagnostics
			if !errors.As(err, &ds) || len(ds) != len(c.want) {
				t.Fatalf("want %d diagnostics, got %v\n%s", len(c.want), err, src)
			}
			for i, w := range c.want {
				if !strings.Contains(ds[i].Error(), w) {
					t.Fatalf("diagnostic %q\nwant it to contain %q", ds[i].Error(), w)
				}
			}
		})
	}
}

// TestTokensGoOnlyToTrustedOrAllowedURLs: types whose endpoint defaults to
// a trusted host (GitHub) take a token there without an allowance, and
// anywhere else only under an operator's prefix; a remote with no token is
// not checked, a templated one is left to the node, a local one is refused.
func TestTokensGoOnlyToTrustedOrAllowedURLs(t *testing.T) {
	types := blueprint.MapTypes{
		"push": {Name: "push", Fields: map[string]blueprint.Field{
			"remote":    {Kind: blueprint.KindString, Endpoint: true, KeyOptional: true, Trusted: []string{"https://github.com"}},
			"token_env": {Kind: blueprint.KindString, CredentialEnv: true},
		}},
		"pr": {Name: "pr", Fields: map[string]blueprint.Field{
			"base_url":  {Kind: blueprint.KindString, Endpoint: true, Trusted: []string{"https://api.github.com"}},
			"token_env": {Kind: blueprint.KindString, CredentialEnv: true},
		}},
	}
	const ghe = "https://ghe.example"
	cases := []struct {
		name, node string
		allow      []string
		want       string // "line:col: path: fragment"; empty means loads
	}{
		{"github remote", "{type: push, remote: https://github.com/o/r.git, token_env: GH_TOKEN}", nil, ""},
		{"github look-alike", "{type: push, remote: https://github.com@evil.example/r.git, token_env: GH_TOKEN}", nil,
			"6:27: nodes.n.remote: the blueprint would send a credential to https://github.com@evil.example/r.git; credentials go only to https://github.com or to URL prefixes the operator allows (--allow-endpoint https://evil.example)"},
		{"other host", "{type: push, remote: https://evil.example/x.git, token_env: GH_TOKEN}", nil, "6:27: nodes.n.remote: the blueprint would send a credential to https://evil.example/x.git"},
		{"cleartext github", "{type: push, remote: http://github.com/o/r.git, token_env: GH_TOKEN}", nil, "nodes.n.remote: the blueprint would send"},
		{"allowed host", "{type: push, remote: " + ghe + "/o/r.git, token_env: GH_TOKEN}", []string{ghe}, ""},
		{"password hidden", "{type: push, remote: 'https://u:hunter22@evil.example/x.git', token_env: GH_TOKEN}", nil, "credential to https://u:xxxxx@evil.example/x.git;"},
		{"no token", "{type: push, remote: https://evil.example/x.git}", nil, ""},
		{"templated", "{type: push, remote: '${{ inputs.r }}', token_env: GH_TOKEN}", nil, ""},
		{"local path", "{type: push, remote: /srv/r.git, token_env: GH_TOKEN}", nil,
			"6:27: nodes.n.remote: /srv/r.git is not an http(s) URL, and credentials are sent only over HTTP(S); the harness would not use the credential there: drop it"},
		{"file URL", "{type: push, remote: 'file:///srv/r.git', token_env: GH_TOKEN}", []string{"file:///srv"}, "nodes.n.remote: file:///srv/r.git is not an http(s) URL"},
		{"default API", "{type: pr, token_env: MY_PAT}", nil, ""},
		{"github API", "{type: pr, base_url: https://api.github.com/}", nil, ""},
		{"enterprise API", "{type: pr, base_url: " + ghe + "/api/v3}", nil, "6:27: nodes.n.base_url: the blueprint would send a credential to " + ghe + "/api/v3"},
		{"enterprise API allowed", "{type: pr, base_url: " + ghe + "/api/v3}", []string{ghe + "/api/v3"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "version: 1\nname: t\ninputs: {r: {default: x}}\nstart: n\nnodes:\n  n: " + strings.TrimSuffix(c.node, "}") + ", next: d}\n  d: {type: succeed}\n"
			_, err := blueprint.Parse("t.yaml", []byte(src), blueprint.WithTypes(types), blueprint.WithAllowEndpoints(c.allow...))
			if c.want == "" {
				if err != nil {
					t.Fatalf("want it to load: %v\n%s", err, src)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}
