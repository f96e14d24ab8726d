package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttackTriggerSecretsNotInRuns: the webhook secret and the Slack
// signing secret are the server's alone; a run started by the server (and
// anything in its box that reads the harness's environment) must not get
// them, or it could sign deliveries that start more runs.
func TestAttackTriggerSecretsNotInRuns(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "triggers.yaml")
	os.WriteFile(file, []byte(`version: 1
public_url: https://inbox.example.com
github:
  secret_env: HOOK_SECRET_FOR_TEST
  token_env: HOOK_TOKEN_FOR_TEST
  repositories:
    - {name: acme/api, users: [ana], blueprints: [fix-ci]}
slack:
  signing_secret_env: SLACK_SECRET_FOR_TEST
  teams: [T1]
  channels: [C1]
  users: [U1]
  blueprints: [fix-ci]
`), 0o600)
	t.Setenv("HOOK_SECRET_FOR_TEST", "hook-secret-value-123")
	t.Setenv("SLACK_SECRET_FOR_TEST", "slack-secret-value-456")
	t.Setenv("HOOK_TOKEN_FOR_TEST", "reply-token-value")
	t.Setenv("UNRELATED_FOR_TEST", "kept")
	c := serveConfig{runs: []string{filepath.Join(dir, "runs")}, triggerFile: file, acts: &serveActions{exe: "/usr/bin/env"}}
	if _, err := c.triggerHooks(); err != nil {
		t.Fatal(err)
	}
	defer c.triggers.Close()
	logf, err := os.Create(filepath.Join(dir, "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.acts.spawn(nil, logf, func() {})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	logf.Close()
	env, _ := os.ReadFile(logf.Name())
	for _, secret := range []string{"hook-secret-value-123", "slack-secret-value-456"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("BREACH: a run's environment holds the trigger secret %q", secret)
		}
	}
	if !strings.Contains(string(env), "UNRELATED_FOR_TEST=kept") {
		t.Errorf("the child lost the rest of the environment:\n%s", env)
	}
}
