package credential_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
)

// TestCredentialsConfigRefused: every problem of a credentials key is
// reported at load, before anything runs, at the key it is about, all of
// them at once.
func TestCredentialsConfigRefused(t *testing.T) {
	_, cfg, _ := newApp(t)
	src := `version: 1
name: bad-credentials
start: push
nodes:
  push:
    type: git_push
    remote: https://github.com/acme/calc.git
    token_env: GITHUB_TOKEN
    credentials:
      github_app: {app_id_env: "1x", key_file: app.pem, installation_id: -3, extra: 1}
    next: review
  review:
    type: review
    credentials: {vault: {path: x}}
    next: ci
  ci:
    type: ci
    provider: github
    credentials: {github_app: {app_id_env: APP_ID, key_file: KEY}}
    next: done
  done: {type: succeed}
`
	_, err := nodes.NewRegistry().Parse("test.yaml", []byte(strings.ReplaceAll(src, "KEY", cfg.KeyFile)))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`test.yaml:10:32: nodes.push.credentials.github_app.app_id_env: want the name of an environment variable holding the app's id, got 1x`,
		`test.yaml:10:85: nodes.push.credentials.github_app.extra: unknown key; want app_id_env, key_file, installation_id or base_url`,
		`test.yaml:10:74: nodes.push.credentials.github_app.installation_id: want the installation's id, a positive number, got -3`,
		`test.yaml:10:48: nodes.push.credentials.github_app.key_file: want the absolute path of the app's private key, got app.pem`,
		`test.yaml:8:16: nodes.push.token_env: token_env and credentials both give this node a token; keep one`,
		`test.yaml:14:26: nodes.review.credentials.vault: unknown issuer "vault"; the one issuer is github_app`,
		`test.yaml:14:18: nodes.review.credentials: want github_app: {app_id_env, key_file, installation_id}`,
		`test.yaml:19:31: nodes.ci.credentials.github_app: github_app needs installation_id`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q", want)
		}
	}
	if t.Failed() {
		t.Logf("got:\n%v", err)
	}
}
