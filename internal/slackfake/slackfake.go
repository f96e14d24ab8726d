package slackfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Command is one slash command as Slack sends it.
type Command struct {
	Team, Channel, User, Text string
	// ResponseURL is where the app may post later messages.
	ResponseURL string
	// At is when Slack sent it (the signed timestamp); zero is now.
	At time.Time
}

// Request is a signed request: its body and headers.
type Request struct {
	Body                 []byte
	Timestamp, Signature string
}

// Header sets the request's headers on h.
func (r Request) Header(h http.Header) {
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	h.Set("X-Slack-Request-Timestamp", r.Timestamp)
	h.Set("X-Slack-Signature", r.Signature)
}

// Sign makes the request Slack would send for c, signed with the app's
// signing secret: v0= and the hex HMAC-SHA256 of "v0:{timestamp}:{body}".
func (c Command) Sign(secret string) Request {
	at := c.At
	if at.IsZero() {
		at = time.Now()
	}
	form := url.Values{"token": {"gIkuvaNzQIHg97ATvDxqgjtO"}, "team_id": {c.Team}, "team_domain": {"example"},
		"enterprise_id": {"E0001"}, "enterprise_name": {"Globular%20Construct%20Inc"},
		"channel_id": {c.Channel}, "channel_name": {"test"}, "user_id": {c.User}, "user_name": {"Steve"},
		"command": {"/sandgate"}, "text": {c.Text}, "response_url": {c.ResponseURL},
		"trigger_id": {"13345224609.738474920.8088930838d88f008e0"}, "api_app_id": {"A123456"}}
	body := []byte(form.Encode())
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%s:", ts)
	m.Write(body)
	return Request{Body: body, Timestamp: ts, Signature: "v0=" + hex.EncodeToString(m.Sum(nil))}
}

// Message is one message the app posted to a response_url.
type Message struct {
	Path         string
	ResponseType string `json:"response_type"`
	Text         string `json:"text"`
}

// Receiver takes the app's messages at /commands/... as Slack's
// response_url does: JSON bodies, answered 200 "ok".
type Receiver struct {
	*httptest.Server
	mu   sync.Mutex
	msgs []Message
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is a response_url for one command.
func (r *Receiver) URL(n int) string {
	return fmt.Sprintf("%s/commands/T0001/%d/1aA2bB3cC4dD5eE6fF7gG8hH", r.Server.URL, n)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	var m Message
	if req.Method != http.MethodPost || json.NewDecoder(req.Body).Decode(&m) != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	m.Path = req.URL.Path
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	w.Write([]byte("ok"))
}

// Messages returns the messages received so far.
func (r *Receiver) Messages() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.msgs...)
}
