package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/runtime"
)

// runSettings are the flags a run was started with that carrying it on
// needs, recorded in the run (runtime.RunOptions.Settings): a model, paths,
// variable names and URL prefixes, never a secret value. answer and
// resume take them unless the flag is given again, so the printed
// `sandgate answer` line works for a run started with --model script:FILE.
type runSettings struct {
	Model            string   `json:"model,omitempty"`
	Record           string   `json:"record,omitempty"`
	BaseURL          string   `json:"base_url,omitempty"`
	APIKeyEnv        string   `json:"api_key_env,omitempty"`
	Prices           string   `json:"prices,omitempty"`
	AllowEnv         []string `json:"allow_env,omitempty"`
	AllowEndpoints   []string `json:"allow_endpoints,omitempty"`
	AllowUnsandboxed bool     `json:"allow_unsandboxed,omitempty"`
	ColdBuilds       bool     `json:"cold_builds,omitempty"`
	// The alert sinks: webhook URLs as given, and the names of the
	// variables holding the others (a Slack webhook URL is a secret).
	AlertWebhooks    []string `json:"alert_webhooks,omitempty"`
	AlertWebhookEnvs []string `json:"alert_webhook_envs,omitempty"`
	AlertSlackEnvs   []string `json:"alert_slack_envs,omitempty"`
}

// settings records the flags, with paths made absolute (the agent finds
// an offline model's file beside the blueprint first, then in the working
// directory, neither of which a later answer shares).
func (rf *runFlags) settings(blueprintFile string) runSettings {
	return runSettings{Model: absModel(rf.model, blueprintFile), Record: absPath(rf.record), BaseURL: rf.baseURL,
		APIKeyEnv: rf.apiKeyEnv, Prices: absPath(rf.prices), AllowEnv: rf.allowEnv, AllowEndpoints: rf.allowEndpoints,
		AllowUnsandboxed: rf.allowUnsandboxed, ColdBuilds: rf.coldBuilds,
		AlertWebhooks: rf.alerts.webhooks, AlertWebhookEnvs: rf.alerts.webhookEnvs, AlertSlackEnvs: rf.alerts.slackEnvs}
}

// carryOn fills every flag not given on this command line from what the
// run in dir was started with.
func (rf *runFlags) carryOn(dir string) error {
	var s runSettings
	if ok, err := runtime.ReadSettings(dir, &s); err != nil || !ok {
		return err
	}
	for _, f := range []struct {
		name string
		dst  *string
		v    string
	}{{"model", &rf.model, s.Model}, {"record", &rf.record, s.Record}, {"base-url", &rf.baseURL, s.BaseURL},
		{"api-key-env", &rf.apiKeyEnv, s.APIKeyEnv}, {"prices", &rf.prices, s.Prices}} {
		if !rf.given[f.name] {
			*f.dst = f.v
		}
	}
	if !rf.given["allow-env"] {
		rf.allowEnv = s.AllowEnv
	}
	if !rf.given["allow-endpoint"] {
		rf.allowEndpoints = s.AllowEndpoints
	}
	if !rf.given["allow-unsandboxed"] {
		rf.allowUnsandboxed = s.AllowUnsandboxed
	}
	if !rf.given["cold-builds"] {
		rf.coldBuilds = s.ColdBuilds
	}
	// The sinks go together: naming any on this command line replaces
	// the run's.
	if !rf.given["alert-webhook"] && !rf.given["alert-webhook-env"] && !rf.given["alert-slack-env"] {
		rf.alerts = alertFlags{webhooks: s.AlertWebhooks, webhookEnvs: s.AlertWebhookEnvs, slackEnvs: s.AlertSlackEnvs}
	}
	return nil
}

// absModel makes the file of an offline model (script:FILE, replay:FILE)
// absolute, resolved as the agent resolves it: beside the blueprint
// first, then in the working directory.
func absModel(model, blueprintFile string) string {
	kind, path, ok := strings.Cut(model, ":")
	if !ok || (kind != "script" && kind != "replay") || filepath.IsAbs(path) {
		return model
	}
	if beside := filepath.Join(filepath.Dir(blueprintFile), path); blueprintFile != "" && fileExists(beside) {
		path = beside
	}
	return kind + ":" + absPath(path)
}

// absPath makes a path flag absolute: nodes run git and the box in other
// directories, where a relative path would name nothing (--runs-dir
// ../state failed the first gate matching .gitignore).
func absPath(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// answerLine is the hand-off's own `sandgate answer` line (with the
// run's directory and the node to continue), or "" when the run cannot be
// answered any more.
func answerLine(dir string) string {
	var h runtime.Handoff
	b, err := os.ReadFile(filepath.Join(dir, "handoff.json"))
	if err != nil || json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.Answer
}
