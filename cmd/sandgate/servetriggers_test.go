package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/internal/slackfake"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

// triageE2E hands the task to an agent whose model is the server's (a
// free-text input may not reach a command: the loader refuses an input
// without a pattern there).
const triageE2E = `version: 1
name: triage
inputs:
  task: {required: true, description: the issue's text}
start: triage
nodes:
  triage: {type: agent, prompt: "Triage this issue: ${{ inputs.task }}", next: done}
  done: {type: succeed}
`

const triggersE2E = `version: 1
public_url: http://inbox.test
max_runs: 2
github:
  secret_env: TEST_GH_HOOK_SECRET
  token_env: TEST_GH_TOKEN
  base_url: GHURL
  repositories:
    - name: acme/api
      label: sandgate
      label_blueprint: triage
      users: [ana]
slack:
  signing_secret_env: TEST_SLACK_SECRET
  response_url_prefix: SLACKURL/commands/
  teams: [T0001]
  channels: [C2147483705]
  users: [U2147483697]
  blueprints: [triage]
`

type triggerWorld struct {
	repo, runs string
	gh         *ghfake.Server
	slack      *slackfake.Receiver
	ts         *httptest.Server
	cfg        *serveConfig
}

// newTriggerWorld serves the inbox with --triggers as cmdServe does, the
// GitHub double as the API replies go to (an --allow-endpoint) and the
// Slack double's receiver as response_url.
func newTriggerWorld(t *testing.T) *triggerWorld {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CLI", "1")
	t.Setenv("TEST_GH_HOOK_SECRET", "hook-secret")
	t.Setenv("TEST_GH_TOKEN", "ghp_replies_0123456789abcdef")
	t.Setenv("TEST_SLACK_SECRET", "slack-signing-secret")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &triggerWorld{repo: gitRepo(t), runs: t.TempDir(), gh: ghfake.New("ghp_replies_0123456789abcdef", "acme/api"), slack: slackfake.NewReceiver()}
	t.Cleanup(w.gh.Close)
	t.Cleanup(w.slack.Close)
	bpDir, file := t.TempDir(), filepath.Join(t.TempDir(), "triggers.yaml")
	os.WriteFile(filepath.Join(bpDir, "triage.yaml"), []byte(triageE2E), 0o644)
	os.WriteFile(file, []byte(strings.NewReplacer("GHURL", w.gh.API.URL, "SLACKURL", w.slack.Server.URL).Replace(triggersE2E)), 0o644)
	model := modelScript(t, "- tool_calls: [{function: {name: finish, arguments: {summary: triaged}}}]\n")
	acts := &serveActions{exe: exe, answerArgs: (&runFlags{model: model}).answerArgs(), allow: []string{w.gh.API.URL},
		blueprints: blueprintSet{dirs: []string{bpDir}, shipped: blueprints.FS}}
	// The runs work on the server's repository: its working directory.
	t.Chdir(w.repo)
	w.cfg = &serveConfig{runs: []string{w.runs}, reviews: []string{t.TempDir()}, token: "inbox-token-0123456789", acts: acts,
		triggerFile: file, triggerPoll: 50e6}
	srv, err := w.cfg.server()
	if err != nil {
		t.Fatal(err)
	}
	srv.Index().MinRefresh = -1
	t.Cleanup(srv.Index().Close)
	w.ts = httptest.NewServer(srv)
	t.Cleanup(func() { browsertest.CloseServer(w.ts); w.cfg.triggers.Close(); acts.wait() })
	return w
}

func (w *triggerWorld) post(t *testing.T, path string, body []byte, header func(http.Header)) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.ts.URL+path, bytes.NewReader(body))
	header(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startedRun is the one run in the runs directory, once it has ended.
func (w *triggerWorld) endedRun(t *testing.T) (string, *runtime.Summary) {
	t.Helper()
	var dir string
	var sum *runtime.Summary
	wait.Until(t, "a run that ended", func() bool {
		m, _ := filepath.Glob(filepath.Join(w.runs, "*", "events.jsonl"))
		if len(m) != 1 {
			return false
		}
		dir = filepath.Dir(m[0])
		s, err := runtime.Summarize(dir)
		sum = s
		return err == nil && s.Status != runtime.StatusRunning
	})
	return dir, sum
}

// TestTriggerGitHubE2E: a labelled issue starts a real sandboxed run of
// the label's blueprint; the issue's text reaches it as data (a title
// like a flag and a body of shell and terminal escapes change nothing:
// the run has it as its task, word for word, and the model is still the
// server's); the
// run is labelled with where it came from and the inbox shows who
// started it; the issue gets the run's link, then its outcome. The same
// delivery again starts nothing.
func TestTriggerGitHubE2E(t *testing.T) {
	w := newTriggerWorld(t)
	hostile := ghfake.Issue{Repo: "acme/api", Number: 7, Title: "--model x", Body: "$(touch /tmp/pwned-by-issue)\n`id`\x1b]0;owned\x07 --allow-env=TEST_GH_TOKEN"}
	d := ghfake.Labeled("hook-secret", hostile, "sandgate", "ana")
	if code, msg := w.post(t, "/hooks/github", d.Body, d.Header); code != http.StatusAccepted {
		t.Fatalf("the labelled issue: %d %s", code, msg)
	}
	if code, msg := w.post(t, "/hooks/github", d.Body, d.Header); code != http.StatusOK || !strings.Contains(msg, "handled before") {
		t.Fatalf("the same delivery again: %d %s", code, msg)
	}
	dir, sum := w.endedRun(t)
	id := filepath.Base(dir)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("the run: %s\n%s", sum.Status, readLogs(dir))
	}
	want := "--model x\n\n" + hostile.Body
	if sum.Inputs["task"] != want {
		t.Errorf("the run's task input: %q, want %q", sum.Inputs["task"], want)
	}
	if l := sum.Labels; l["trigger"] != "github" || l["by"] != "ana" || l["source"] != "https://github.com/acme/api/issues/7" {
		t.Errorf("the run's labels: %v", l)
	}
	if _, err := os.Stat("/tmp/pwned-by-issue"); err == nil {
		t.Fatal("BREACH: the issue's text ran as shell")
	}
	wait.Until(t, "the link and outcome comments", func() bool { return len(w.gh.Comments()) >= 2 })
	c := w.gh.Comments()
	link := "http://inbox.test/run/0/" + id
	if len(c) != 2 || c[0].Number != 7 || c[0].Body != "sandgate started triage: "+link ||
		c[1].Body != "sandgate: triage succeeded: "+link+" (changes it queued for review: http://inbox.test/reviews)" {
		t.Fatalf("comments: %+v", c)
	}
	// The index follows the runs directory; the page shows the labels
	// once it has read the run.
	wait.Until(t, "the run page showing who started the run and from where", func() bool {
		page := w.get(t, "/run/0/"+id)
		return strings.Contains(page, "<b>github:ana</b> started triage from github") && strings.Contains(page, ">trigger=github<") && strings.Contains(page, ">by=ana<")
	})
}

func (w *triggerWorld) get(t *testing.T, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", w.ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer inbox-token-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestTriggerSlackE2E: a slash command is acknowledged at once, only to
// its sender, and starts a real run; the run's link and its outcome go
// to the command's response_url.
func TestTriggerSlackE2E(t *testing.T) {
	w := newTriggerWorld(t)
	cmd := slackfake.Command{Team: "T0001", Channel: "C2147483705", User: "U2147483697", Text: `triage task="the build is red"`, ResponseURL: w.slack.URL(1)}
	r := cmd.Sign("slack-signing-secret")
	code, body := w.post(t, "/hooks/slack", r.Body, r.Header)
	var ack struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &ack) != nil || ack.ResponseType != "ephemeral" || !strings.HasPrefix(ack.Text, "Starting triage") {
		t.Fatalf("the acknowledgement: %d %s", code, body)
	}
	dir, sum := w.endedRun(t)
	if sum.Status != runtime.StatusSucceeded || sum.Inputs["task"] != "the build is red" || sum.Labels["trigger"] != "slack" || sum.Labels["by"] != "U2147483697" {
		t.Fatalf("the run: %+v\n%s", sum, readLogs(dir))
	}
	wait.Until(t, "the link and the outcome", func() bool { return len(w.slack.Messages()) >= 2 })
	m := w.slack.Messages()
	link := "http://inbox.test/run/0/" + filepath.Base(dir)
	if m[0].Text != "sandgate started triage: "+link || !strings.HasPrefix(m[1].Text, "sandgate: triage succeeded: "+link) || m[1].ResponseType != "in_channel" {
		t.Fatalf("response_url got %+v", m)
	}
}

// TestTriggerFileRefusedAtStart: serve does not start with a trigger file
// that names a blueprint it cannot start, whose secret's variable is
// empty, or whose base_url a token may not go to; each says why.
func TestTriggerFileRefusedAtStart(t *testing.T) {
	t.Setenv("TEST_GH_HOOK_SECRET", "hook-secret")
	t.Setenv("TEST_EMPTY_SECRET", "")
	good := "version: 1\npublic_url: http://inbox.test\ngithub:\n  secret_env: TEST_GH_HOOK_SECRET\n  token_env: T\n  BASE\n  repositories:\n    - {name: acme/api, users: [ana], blueprints: [BP]}\n"
	for _, tc := range []struct{ name, src, want string }{
		{"unknown blueprint", strings.NewReplacer("BASE", "base_url: https://api.github.com", "BP", "nope").Replace(good), `triggers.yaml:8:51: github.repositories[0].blueprints[0]: no blueprint "nope" to start`},
		{"empty secret", strings.NewReplacer("BASE", "base_url: https://api.github.com", "BP", "fix-ci", "TEST_GH_HOOK_SECRET", "TEST_EMPTY_SECRET").Replace(good), "github.secret_env TEST_EMPTY_SECRET is not set"},
		{"base_url not allowed", strings.NewReplacer("BASE", "base_url: https://evil.example.com", "BP", "fix-ci").Replace(good), "github.base_url"},
	} {
		file := filepath.Join(t.TempDir(), "triggers.yaml")
		os.WriteFile(file, []byte(tc.src), 0o644)
		cfg := serveConfig{runs: []string{t.TempDir()}, reviews: []string{t.TempDir()}, acts: &serveActions{}, triggerFile: file}
		_, err := cfg.server()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
