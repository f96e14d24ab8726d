package trigger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxSlackBody caps a slash command's form (Slack's are a few hundred
// bytes; its text is at most 4000 characters).
const maxSlackBody = 64 << 10

// slackWindow is how old a signed request may be (Slack's advice).
const slackWindow = 5 * time.Minute

// SignSlack is X-Slack-Signature's value for a request sent at ts.
func SignSlack(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "v0:%s:", ts)
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// slack serves POST /hooks/slack: a slash command. It answers at once
// (Slack waits 3 seconds) with an ephemeral message, then posts the run's
// link and outcome to the command's response_url.
func (h *Handler) slack(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxSlackBody)
	if !ok {
		return
	}
	ts := r.Header.Get("X-Slack-Request-Timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sent, 0)).Abs() > slackWindow {
		http.Error(w, "stale or missing timestamp", http.StatusUnauthorized)
		return
	}
	sig := r.Header.Get("X-Slack-Signature")
	if !hmac.Equal([]byte(sig), []byte(SignSlack(h.opts.SlackSecret, ts, body))) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	// A replay inside the window carries the same signature.
	if fresh, err := h.seen.add("slack:" + strings.TrimPrefix(sig, "v0=")); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	} else if !fresh {
		ephemeral(w, "This command was received before: nothing done.")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "not a form", http.StatusBadRequest)
		return
	}
	msg, req := h.slackCommand(form)
	if req == nil {
		ephemeral(w, "sandgate refused: "+msg)
		return
	}
	respond := form.Get("response_url")
	h.launch(*req, func(ctx context.Context, text string) { h.respond(ctx, respond, text) })
	ephemeral(w, msg)
}

// slackCommand checks a command's place, person and words; it returns the
// run to start, or nil and the reason.
func (h *Handler) slackCommand(form url.Values) (string, *Request) {
	c := h.opts.Config.Slack
	team, channel, user := form.Get("team_id"), form.Get("channel_id"), form.Get("user_id")
	switch {
	case !slices.Contains(c.Teams, team):
		return "this workspace may not start runs (not among the trigger file's teams)", nil
	case !slices.Contains(c.Channels, channel):
		return "runs may not be started from this channel (not among the trigger file's channels)", nil
	case !slices.Contains(c.Users, user):
		return "you may not start runs (not among the trigger file's users)", nil
	case !underPrefix(form.Get("response_url"), c.ResponseURLPrefix):
		return "the command's response_url is not Slack's", nil
	}
	name, inputs, err := parseCommand(form.Get("text"))
	if err == nil && !slices.Contains(c.Blueprints, name) {
		err = fmt.Errorf("blueprint %q may not be started from Slack (the trigger file allows: %s)", name, strings.Join(c.Blueprints, ", "))
	}
	if err == nil {
		err = h.check(name, inputs)
	}
	if err != nil {
		return oneLine(err.Error()), nil
	}
	if ok, _ := h.reserve("slack"); !ok {
		return h.busyReason(), nil
	}
	return fmt.Sprintf("Starting %s; its link follows here.", name), &Request{Blueprint: name, Inputs: inputs, By: "slack:" + user,
		Labels: map[string]string{"trigger": "slack", "by": user, "source": "slack:" + team + "/" + channel}}
}

// underPrefix reports whether raw is under prefix by its parts, not its
// spelling: the same scheme and host (port included), no user@, and the
// path under prefix's. A prefix written without its trailing slash is no
// way to reach "https://hooks.slack.com.evil.example/" or another port.
func underPrefix(raw, prefix string) bool {
	u, err := url.Parse(raw)
	p, perr := url.Parse(prefix)
	if err != nil || perr != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return false
	}
	return u.Scheme == p.Scheme && strings.EqualFold(u.Host, p.Host) &&
		strings.HasPrefix(u.EscapedPath(), p.EscapedPath()) && !strings.Contains(u.Path, "/../")
}

// ephemeral answers the command where only its sender sees it.
func ephemeral(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"response_type": "ephemeral", "text": text})
}

// respond posts a message for the channel to the command's response_url
// (checked against the configured prefix; no redirect is followed).
func (h *Handler) respond(ctx context.Context, to, text string) {
	b, _ := json.Marshal(map[string]any{"response_type": "in_channel", "text": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(b))
	if err != nil {
		h.logf("slack response_url: %v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.opts.Client.Do(req)
	if err != nil {
		h.logf("slack response_url: %v", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.logf("slack response_url: %s", resp.Status)
	}
}
