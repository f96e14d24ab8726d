package trigger

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/slackfake"
	"github.com/sandgate/sandgate/internal/wait"
)

func okCommand(w *world, text string) slackfake.Command {
	return slackfake.Command{Team: "T0001", Channel: "C2147483705", User: "U2147483697", Text: text, ResponseURL: w.slack.URL(1)}
}

// TestHookSlackSignatureAttacks: stale, future, forged, missing and
// replayed commands get 401 (a replay inside the window is answered, and
// starts nothing).
func TestHookSlackSignatureAttacks(t *testing.T) {
	w := newWorld(t, 4)
	good := okCommand(w, "chore task=go")
	stale := good
	stale.At = time.Now().Add(-6 * time.Minute)
	future := good
	future.At = time.Now().Add(6 * time.Minute)
	signed := good.Sign(slackSecret)
	for name, r := range map[string]slackfake.Request{
		"stale":           stale.Sign(slackSecret),
		"from the future": future.Sign(slackSecret),
		"forged":          {Body: signed.Body, Timestamp: signed.Timestamp, Signature: "v0=" + strings.Repeat("a", 64)},
		"another secret":  good.Sign("not the secret"),
		"missing":         {Body: signed.Body, Timestamp: signed.Timestamp},
		"no timestamp":    {Body: signed.Body, Signature: signed.Signature},
		"stale timestamp on a fresh signature's body": {Body: signed.Body, Timestamp: stale.Sign(slackSecret).Timestamp, Signature: signed.Signature},
	} {
		if code, msg := w.command(t, r); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s, want 401", name, code, msg)
		}
	}
	if code, msg := w.command(t, signed); code != http.StatusOK || !strings.Contains(msg, "Starting chore") {
		t.Fatalf("the signed command: %d %s", code, msg)
	}
	if code, msg := w.command(t, signed); code != http.StatusOK || !strings.Contains(msg, "received before") {
		t.Fatalf("a replay: %d %s", code, msg)
	}
	wait.Until(t, "the link", func() bool { return len(w.slack.Messages()) == 1 })
	if n := len(w.start.started()); n != 1 {
		t.Fatalf("BREACH: %d runs started", n)
	}
	m := w.slack.Messages()[0]
	r := w.start.started()[0]
	if m.ResponseType != "in_channel" || m.Text != "sandgate started chore: https://inbox.example.com/run/0/run-1" {
		t.Errorf("response_url got %+v", m)
	}
	if r.Inputs["task"] != "go" || r.Labels["trigger"] != "slack" || r.Labels["by"] != "U2147483697" || r.Labels["source"] != "slack:T0001/C2147483705" || r.By != "slack:U2147483697" {
		t.Errorf("started %+v", r)
	}
}

// TestHookSlackRefusals: a team, channel or user outside the file, a
// blueprint Slack may not start, bad inputs and a response_url that is
// not Slack's are refused in an ephemeral answer with the reason.
func TestHookSlackRefusals(t *testing.T) {
	w := newWorld(t, 4)
	for _, tc := range []struct {
		name   string
		edit   func(*slackfake.Command)
		reason string
	}{
		{"team", func(c *slackfake.Command) { c.Team = "T9999" }, "this workspace may not start runs"},
		{"channel", func(c *slackfake.Command) { c.Channel = "C0000" }, "runs may not be started from this channel"},
		{"user", func(c *slackfake.Command) { c.User = "U0000" }, "you may not start runs"},
		{"response_url", func(c *slackfake.Command) { c.ResponseURL = "http://127.0.0.1:1/steal" }, "response_url is not Slack's"},
		{"blueprint", func(c *slackfake.Command) { c.Text = "fix-ci" }, `blueprint "fix-ci" may not be started from Slack`},
		{"pattern", func(c *slackfake.Command) { c.Text = "chore task=x ticket=OPS-x" }, "does not match its pattern"},
		{"required", func(c *slackfake.Command) { c.Text = "chore" }, "task"},
		{"empty", func(c *slackfake.Command) { c.Text = "" }, "say which blueprint"},
	} {
		c := okCommand(w, "chore task=go")
		tc.edit(&c)
		code, body := w.command(t, c.Sign(slackSecret))
		var msg struct{ ResponseType, Text string }
		_ = json.Unmarshal([]byte(strings.ReplaceAll(body, "response_type", "responsetype")), &msg)
		if code != http.StatusOK || !strings.Contains(body, `"response_type":"ephemeral"`) || !strings.HasPrefix(msg.Text, "sandgate refused: ") || !strings.Contains(msg.Text, tc.reason) {
			t.Errorf("%s: %d %s, want an ephemeral refusal with %q", tc.name, code, body, tc.reason)
		}
	}
	w.h.Wait()
	if n := len(w.start.started()); n != 0 || len(w.slack.Messages()) != 0 {
		t.Fatalf("BREACH: refused commands started %d runs, posted %v", n, w.slack.Messages())
	}
}
