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
