package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAlertFlagsSettings: a run records its webhook URLs and the names of
// the variables holding the others, never a Slack webhook URL; answer and
// resume take the run's sinks unless one is named again; serve passes
// them on to the runs it starts.
func TestAlertFlagsSettings(t *testing.T) {
	const slackURL = "https://hooks.slack.com/services/T000/B000/s3cretpart"
	t.Setenv("SG_TEST_SLACK", slackURL)
	rf := runFlags{alerts: alertFlags{webhooks: []string{"https://alerts.example/hook"}, slackEnvs: []string{"SG_TEST_SLACK"}}}
	b, err := json.Marshal(rf.settings(""))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cretpart") || !strings.Contains(string(b), "SG_TEST_SLACK") || !strings.Contains(string(b), "alerts.example/hook") {
		t.Fatalf("settings: %s", b)
	}
	dir := t.TempDir()
	meta, _ := json.Marshal(map[string]any{"run_id": "r", "settings": json.RawMessage(b)})
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	var again runFlags
	again.given = map[string]bool{}
	if err := again.carryOn(dir); err != nil {
		t.Fatal(err)
	}
	sinks, err := again.alerts.sinks()
	if err != nil || len(sinks) != 2 || sinks[1].URL != slackURL || sinks[1].Format != "slack" || strings.Contains(sinks[1].Name, "s3cret") {
		t.Fatalf("carried on: %+v %v", sinks, err)
	}
	other := runFlags{given: map[string]bool{"alert-webhook-env": true}, alerts: alertFlags{webhookEnvs: []string{"SG_TEST_SLACK"}}}
	if err := other.carryOn(dir); err != nil || len(other.alerts.webhooks)+len(other.alerts.slackEnvs) != 0 {
		t.Errorf("a sink named again did not replace the run's: %+v %v", other.alerts, err)
	}
	if args := rf.answerArgs(); !slices.Contains(args, "--alert-slack-env") || slices.Contains(args, slackURL) {
		t.Errorf("serve's args for its children: %q", args)
	}
	if !slices.Contains(rf.alerts.secretNames(), "SG_TEST_SLACK") || rf.redactor(nil).String(slackURL) == slackURL {
		t.Error("the Slack URL is not redacted from what the CLI prints")
	}
}

// TestAlertFlagsRefused: a sink the harness will not post to stops the
// command before anything runs, naming the flag.
func TestAlertFlagsRefused(t *testing.T) {
	t.Setenv("SG_TEST_META", "http://169.254.169.254/latest/meta-data/")
	for _, tc := range []struct {
		a    alertFlags
		want string
	}{
		{alertFlags{webhooks: []string{"ftp://example.com/x"}}, "--alert-webhook"},
		{alertFlags{webhooks: []string{"http://[fe80::1]/x"}}, "link-local"},
		{alertFlags{slackEnvs: []string{"SG_TEST_UNSET_VAR"}}, "not set"},
		{alertFlags{webhookEnvs: []string{"SG_TEST_META"}}, "--alert-webhook-env"},
	} {
		if _, err := tc.a.sinks(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.a, err, tc.want)
		}
	}
	code, _, errs := runCLI("serve", "--alert-webhook", "file:///etc/passwd")
	if code != exitUsage || !strings.Contains(errs, "--alert-webhook") {
		t.Errorf("serve with a file URL sink: exit %d, %s", code, errs)
	}
}
