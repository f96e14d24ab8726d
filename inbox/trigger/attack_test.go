package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/internal/wait"
)

// resign edits a delivery's JSON body and signs it again with the real
// secret: what GitHub would send for that payload.
func resign(t *testing.T, d ghfake.Delivery, edit func(map[string]any)) ghfake.Delivery {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.Body, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	d.Body, _ = json.Marshal(m)
	d.Signature = SignGitHub([]byte(ghSecret), d.Body)
	return d
}

// TestAttackGitHubReplayUnderNewDeliveryID: X-GitHub-Delivery is not
// covered by the signature, so whoever captured one signed delivery (a
// proxy's log, a leaked delivery page) sends it again under fresh ids.
// Each copy must start nothing.
func TestAttackGitHubReplayUnderNewDeliveryID(t *testing.T) {
	w := newWorld(t, 50)
	d := ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore")
	if code, msg := w.deliver(t, d); code != http.StatusAccepted {
		t.Fatalf("first: %d %s", code, msg)
	}
	for _, id := range []string{"replayed-1", "replayed-2", strings.ToUpper(d.ID)} {
		copy := d
		copy.ID = id
		if code, msg := w.deliver(t, copy); code == http.StatusAccepted {
			t.Errorf("BREACH: the delivery under id %s: %d %s", id, code, msg)
		}
	}
	w.comments(t, 1)
	// The body is remembered across a restart as the id is.
	w.h.Close()
	w.open(t, 50)
	d.ID = "after-restart"
	if code, msg := w.deliver(t, d); code == http.StatusAccepted {
		t.Errorf("BREACH: the delivery after a restart under a new id: %d %s", code, msg)
	}
	if n := len(w.start.started()); n != 1 {
		t.Fatalf("BREACH: one signed delivery sent under new ids started %d runs", n)
	}
}

// TestAttackGitHubReplayAfterEviction: the store of ids seen is bounded;
// an old captured delivery sent once its id has been forgotten must still
// start nothing: it is too old to be acted on.
func TestAttackGitHubReplayAfterEviction(t *testing.T) {
	w := newWorld(t, 50)
	w.h.seen.max = 2
	old := time.Now().Add(-30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	captured := resign(t, ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore"), func(m map[string]any) {
		m["comment"].(map[string]any)["created_at"] = old
		m["issue"].(map[string]any)["updated_at"] = old
	})
	label := resign(t, ghfake.Labeled(ghSecret, issue, "sandgate", "ana"), func(m map[string]any) {
		m["issue"].(map[string]any)["updated_at"] = old
	})
	for _, d := range []ghfake.Delivery{captured, label} {
		code, msg := w.deliver(t, d)
		if code == http.StatusAccepted || !strings.Contains(msg, "old") {
			t.Errorf("a month-old delivery: %d %s", code, msg)
		}
	}
	// Fresh deliveries push the old ids out of the store.
	for range 4 {
		w.deliver(t, ghfake.Commented(ghSecret, issue, "ana", "thanks"))
	}
	captured.ID, label.ID = "again-1", "again-2"
	for _, d := range []ghfake.Delivery{captured, label} {
		if code, msg := w.deliver(t, d); code == http.StatusAccepted {
			t.Errorf("BREACH: a month-old delivery replayed under a new id: %d %s", code, msg)
		}
	}
	w.noneStarted(t)
}

// TestAttackGitHubEditedAndForeignEvents: only a new comment by an allowed
// author starts a run: an allowed author's comment edited by someone else,
// a comment whose author is allowed but whose sender is not, a label
// added by a bot, and a repository whose name only resembles an allowed
// one start nothing.
func TestAttackGitHubEditedAndForeignEvents(t *testing.T) {
	w := newWorld(t, 50)
	edited := resign(t, ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore"), func(m map[string]any) {
		m["action"] = "edited"
		m["sender"] = map[string]any{"login": "mallory", "type": "User"}
	})
	bot := resign(t, ghfake.Labeled(ghSecret, issue, "sandgate", "ana"), func(m map[string]any) {
		m["sender"] = map[string]any{"login": "ana", "type": "Bot"}
	})
	for name, d := range map[string]ghfake.Delivery{
		"edited":         edited,
		"bot label":      bot,
		"similar repo":   ghfake.Commented(ghSecret, ghfake.Issue{Repo: "acme/api-", Number: 1}, "ana", "/sandgate chore"),
		"similar owner":  ghfake.Commented(ghSecret, ghfake.Issue{Repo: "acme-/api", Number: 1}, "ana", "/sandgate chore"),
		"kelvin sign":    ghfake.Commented(ghSecret, ghfake.Issue{Repo: "acme/api", Number: 1}, "\u212aana", "/sandgate chore"),
		"blueprint path": ghfake.Commented(ghSecret, issue, "ana", "/sandgate ../chore"),
		"absolute":       ghfake.Commented(ghSecret, issue, "ana", "/sandgate /etc/chore"),
		"undeclared":     ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore model=x base_url=http://evil"),
		"flag in value":  ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore ticket=--model=x"),
		"NUL in value":   ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore task=a\x00b"),
	} {
		if code, msg := w.deliver(t, d); code == http.StatusAccepted {
			t.Errorf("BREACH: %s: %d %s", name, code, msg)
		}
	}
	w.h.out.Wait()
	if n := len(w.start.started()); n != 0 {
		t.Fatalf("BREACH: %d runs started: %+v", n, w.start.started())
	}
}

// TestAttackGitHubRefusalSpam: anyone can comment on a public issue; a
// stranger's `/sandgate` comments must not make the server comment once
// each (the reply token's rate limit is the operator's, and each reply
// notifies everyone on the issue).
func TestAttackGitHubRefusalSpam(t *testing.T) {
	w := newWorld(t, 50)
	for range 20 {
		w.deliver(t, ghfake.Commented(ghSecret, issue, "mallory", "/sandgate chore"))
	}
	w.h.out.Wait()
	if c := w.gh.Comments(); len(c) > 1 {
		t.Fatalf("BREACH: 20 comments by a stranger made the server comment %d times", len(c))
	}
}

// failing is a Starter whose failure carries what a start's error does:
// the child's log tail, local paths and whatever the harness printed.
type failing struct{}

const leaky = "sandgate run: exit status 1: open /home/op/.config/sandgate/key: GH_TOKEN=ghp_leaked0123456789 /srv/private/clone"

func (failing) StartTriggered(context.Context, Request) (string, error) { return "", errors.New(leaky) }

// TestAttackStartFailureStaysHome: a run that cannot start is reported on
// the issue (public) and in the channel without the error's text: the
// harness's log tail, paths and values stay in the server's log.
func TestAttackStartFailureStaysHome(t *testing.T) {
	w := newWorld(t, 4)
	w.h.opts.Starter = failing{}
	if code, msg := w.deliver(t, ghfake.Labeled(ghSecret, issue, "sandgate", "ana")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	cmd := okCommand(w, "chore task=go")
	if code, msg := w.command(t, cmd.Sign(slackSecret)); code != http.StatusOK {
		t.Fatalf("%d %s", code, msg)
	}
	c := w.comments(t, 1)
	wait.Until(t, "the slack reply", func() bool { return len(w.slack.Messages()) == 1 })
	for _, text := range []string{c[0].Body, w.slack.Messages()[0].Text} {
		if !strings.Contains(text, "could not start chore") {
			t.Errorf("reply %q does not say the run did not start", text)
		}
		for _, secret := range []string{"ghp_leaked", "/home/op", "/srv/private", "exit status"} {
			if strings.Contains(text, secret) {
				t.Errorf("BREACH: reply %q carries %q", text, secret)
			}
		}
	}
}

// TestAttackSlackResponseURLLookalike: response_url_prefix written
// without its trailing slash must not let a signed command send the
// harness's replies to another port, host or user@host.
func TestAttackSlackResponseURLLookalike(t *testing.T) {
	w := newWorld(t, 50)
	w.h.opts.Config.Slack.ResponseURLPrefix = w.slack.Server.URL // http://127.0.0.1:PORT, no slash
	for _, to := range []string{
		w.slack.Server.URL + "0/commands/1",
		w.slack.Server.URL + ".evil.example/commands/1",
		w.slack.Server.URL + "@evil.example/commands/1",
		w.slack.Server.URL + "\\@evil.example/x",
	} {
		c := okCommand(w, "chore task=go")
		c.ResponseURL = to
		code, msg := w.command(t, c.Sign(slackSecret))
		if code != http.StatusOK || !strings.Contains(msg, "not Slack's") {
			t.Errorf("BREACH: response_url %s: %d %s", to, code, msg)
		}
	}
	w.noneStarted(t)
}

// TestAttackSlackHeaderTricks: a repeated signature header, a timestamp
// with a sign or leading zeros, and a body changed after signing get 401.
func TestAttackSlackHeaderTricks(t *testing.T) {
	w := newWorld(t, 50)
	good := okCommand(w, "chore task=go").Sign(slackSecret)
	send := func(body []byte, hdr func(http.Header)) int {
		req, _ := http.NewRequest("POST", w.ts.URL+"/hooks/slack", strings.NewReader(string(body)))
		good.Header(req.Header)
		hdr(req.Header)
		code, _ := do(t, req)
		return code
	}
	cases := map[string]int{
		"bad signature first": send(good.Body, func(h http.Header) {
			h.Set("X-Slack-Signature", "v0=00")
			h.Add("X-Slack-Signature", good.Signature)
		}),
		"plus timestamp": send(good.Body, func(h http.Header) { h.Set("X-Slack-Request-Timestamp", "+"+good.Timestamp) }),
		"zero timestamp": send(good.Body, func(h http.Header) { h.Set("X-Slack-Request-Timestamp", "0"+good.Timestamp) }),
		"body appended":  send(append([]byte(string(good.Body)), "&text=chore+task%3Dother"...), func(http.Header) {}),
		"uppercase v0":   send(good.Body, func(h http.Header) { h.Set("X-Slack-Signature", "V0="+strings.TrimPrefix(good.Signature, "v0=")) }),
	}
	for name, code := range cases {
		if code != http.StatusUnauthorized {
			t.Errorf("BREACH: %s: %d, want 401", name, code)
		}
	}
	w.noneStarted(t)
}

// TestAttackGitHubRefusalMentions: a refusal that quotes a value (an
// input against its pattern) must not mention a person or team in the
// bot's comment.
func TestAttackGitHubRefusalMentions(t *testing.T) {
	w := newWorld(t, 4)
	code, msg := w.deliver(t, ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore ticket=@acme/everyone"))
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s", code, msg)
	}
	c := w.comments(t, 1)
	if strings.Contains(c[0].Body, "@acme") {
		t.Fatalf("BREACH: the reply mentions a team: %q", c[0].Body)
	}
}

// TestAttackGitHubPayloadURLsIgnored: replies go to the trigger file's
// base_url and repository, whatever URLs the payload names (an Enterprise
// payload, or one for a look-alike name in another case).
func TestAttackGitHubPayloadURLsIgnored(t *testing.T) {
	w := newWorld(t, 4)
	d := resign(t, ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore"), func(m map[string]any) {
		repo := m["repository"].(map[string]any)
		repo["full_name"] = "ACME/API"
		repo["url"] = "http://127.0.0.1:1/api/v3/repos/acme/api"
		m["issue"].(map[string]any)["comments_url"] = "http://127.0.0.1:1/steal"
		m["issue"].(map[string]any)["html_url"] = "javascript:alert(1)"
	})
	if code, msg := w.deliver(t, d); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	c := w.comments(t, 1)
	if c[0].Repo != "acme/api" || c[0].Number != 7 {
		t.Fatalf("the reply went to %+v", c[0])
	}
	if src := w.start.started()[0].Labels["source"]; strings.HasPrefix(src, "javascript:") {
		t.Fatalf("BREACH: the run's source label is %q", src)
	}
}

// TestAttackSlackStorm: 100 distinct signed commands at once start at most
// max_runs runs.
func TestAttackSlackStorm(t *testing.T) {
	const max = 3
	w := newWorld(t, max)
	var wg sync.WaitGroup
	started := make([]bool, 100)
	for i := range started {
		r := okCommand(w, fmt.Sprintf("chore task=go-%d", i)).Sign(slackSecret)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, msg := w.command(t, r)
			started[i] = strings.Contains(msg, "Starting chore")
		}()
	}
	wg.Wait()
	n := 0
	for _, s := range started {
		if s {
			n++
		}
	}
	wait.Until(t, "the links", func() bool { return len(w.slack.Messages()) >= n })
	if n != max || len(w.start.started()) != max {
		t.Fatalf("BREACH: 100 commands started %d runs (%d answered starting), cap %d", len(w.start.started()), n, max)
	}
}

// noneStarted fails the test when any run was started, once the replies in
// flight are posted.
func (w *world) noneStarted(t *testing.T) {
	t.Helper()
	w.h.out.Wait()
	if r := w.start.started(); len(r) != 0 {
		t.Fatalf("BREACH: %d runs started: %+v", len(r), r)
	}
}
