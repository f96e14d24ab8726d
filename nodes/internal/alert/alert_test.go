package alert

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/secrets"
)

// fast are options for tests: no hold, quick retries.
func fast(sinks ...Sink) Options {
	return Options{Sinks: sinks, Hold: time.Millisecond, Backoff: time.Millisecond, MaxWait: 50 * time.Millisecond, Drain: 30 * time.Second}
}

func open(t *testing.T, dir string, o Options) *Dispatcher {
	t.Helper()
	d, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAlertWebhookJSON: the JSON sink receives the event as documented:
// version, kind, run, node, time, text, fields, count.
func TestAlertWebhookJSON(t *testing.T) {
	rcv := newReceiver(t)
	d := open(t, filepath.Join(t.TempDir(), "run-1"), fast(Sink{Format: FormatJSON, URL: rcv.URL, Name: "hook"}))
	d.Raise(Event{Kind: KindEgressDenied, Node: "agent", Key: "evil.example", Text: "the box asked for CONNECT evil.example:443: not allowed",
		Fields: map[string]string{"target": "evil.example:443"}})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got := rcv.got()
	if len(got) != 1 {
		t.Fatalf("got %d deliveries, want 1", len(got))
	}
	var m map[string]any
	if err := json.Unmarshal(got[0], &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"version": 1.0, "source": "sandgate", "kind": KindEgressDenied, "node": "agent", "count": 1.0, "key": "evil.example"} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v (%s)", k, m[k], want, got[0])
		}
	}
	if m["run"] != "run-1" {
		t.Errorf("run = %v, want the run directory's name", m["run"])
	}
	for _, k := range []string{"id", "time", "text"} {
		if s, _ := m[k].(string); s == "" {
			t.Errorf("no %s in %s", k, got[0])
		}
	}
	if f, _ := m["fields"].(map[string]any); f["target"] != "evil.example:443" {
		t.Errorf("fields = %v", m["fields"])
	}
}

// TestAlertSlackPayload: a Slack sink gets an incoming-webhook message as
// Slack documents it: text (the notification's fallback) and blocks, a
// mrkdwn section and a context; &, < and > escaped so a host name cannot
// become a link or a mention.
func TestAlertSlackPayload(t *testing.T) {
	rcv := newReceiver(t)
	d := open(t, t.TempDir(), fast(Sink{Format: FormatSlack, URL: rcv.URL, Name: "slack $X"}))
	d.Raise(Event{Kind: KindEgressSensitive, Node: "agent", Text: "the box asked for <!channel> & <https://x|y>"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got := rcv.got()
	if len(got) != 1 {
		t.Fatalf("got %d deliveries, want 1", len(got))
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(got[0], &msg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Text, "&lt;!channel&gt; &amp; &lt;https://x|y&gt;") || strings.Contains(msg.Text, "<") {
		t.Errorf("text not escaped: %q", msg.Text)
	}
	if len(msg.Blocks) != 2 || msg.Blocks[0].Type != "section" || msg.Blocks[0].Text == nil || msg.Blocks[0].Text.Type != "mrkdwn" ||
		msg.Blocks[1].Type != "context" || len(msg.Blocks[1].Elements) != 1 || !strings.Contains(msg.Blocks[1].Elements[0].Text, KindEgressSensitive) {
		t.Errorf("blocks = %s", got[0])
	}
}

// TestAlertRetries: 5xx and 429 are retried (Retry-After honoured),
// each attempt recorded; a 4xx is a refusal, not retried; attempts are
// bounded.
func TestAlertRetries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []func(http.ResponseWriter)
		want    []string
		bodies  int
	}{
		{"500 then success", []func(http.ResponseWriter){status(500), status(502)}, []string{StatusFailed, StatusFailed, StatusDelivered}, 1},
		{"429 with Retry-After", []func(http.ResponseWriter){status(429, "Retry-After", "0")}, []string{StatusFailed, StatusDelivered}, 1},
		{"404 refused", []func(http.ResponseWriter){status(404)}, []string{StatusRefused}, 0},
		{"gives up", []func(http.ResponseWriter){status(503), status(503), status(503)}, []string{StatusFailed, StatusFailed, StatusGaveUp}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := newReceiver(t, tc.replies...)
			dir := t.TempDir()
			o := fast(Sink{Format: FormatJSON, URL: rcv.URL, Name: "hook"})
			o.Attempts = 3
			d := open(t, dir, o)
			d.Raise(Event{Kind: KindCanary, Text: "forged"})
			_ = d.Close()
			recs := records(t, dir)
			if got := statuses(recs, "hook"); !slices.Equal(got, tc.want) {
				t.Errorf("statuses %v, want %v", got, tc.want)
			}
			if n := len(rcv.got()); n != tc.bodies {
				t.Errorf("%d bodies delivered, want %d", n, tc.bodies)
			}
			if tc.replies != nil && recs[1].HTTPStatus == 0 {
				t.Errorf("the failed attempt's HTTP status is not recorded: %+v", recs[1])
			}
		})
	}
}

// TestAlertWait: a Retry-After is honoured up to MaxWait; without one the
// backoff doubles, jittered within its upper half.
func TestAlertWait(t *testing.T) {
	w := &worker{d: &Dispatcher{o: Options{Backoff: time.Second, MaxWait: time.Minute}}}
	if got := w.wait(1, 7*time.Second); got != 7*time.Second {
		t.Errorf("Retry-After 7s: waited %v", got)
	}
	if got := w.wait(1, time.Hour); got != time.Minute {
		t.Errorf("Retry-After 1h: waited %v, want MaxWait", got)
	}
	for n, hi := range map[int]time.Duration{1: time.Second, 3: 4 * time.Second, 30: time.Minute} {
		if got := w.wait(n, 0); got < hi/2 || got > hi {
			t.Errorf("attempt %d: waited %v, want within [%v, %v]", n, got, hi/2, hi)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{"3": 3 * time.Second, now.Add(9 * time.Second).Format(http.TimeFormat): 9 * time.Second, "soon": 0, "": 0} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", h, got, want)
		}
	}
}

// TestAlertDedup: 100 identical alerts are one delivery with a count of
// 100; another key is its own.
func TestAlertDedup(t *testing.T) {
	rcv := newReceiver(t)
	o := fast(Sink{Format: FormatJSON, URL: rcv.URL})
	o.Hold = time.Hour // nothing leaves before Close: the count is whole
	d := open(t, t.TempDir(), o)
	for range 100 {
		d.Raise(Event{Kind: KindEgressDenied, Key: "evil.example", Text: "denied evil.example"})
	}
	d.Raise(Event{Kind: KindEgressDenied, Key: "other.example", Text: "denied other.example"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, b := range rcv.got() {
		var e Event
		_ = json.Unmarshal(b, &e)
		counts[e.Key] += e.Count
		counts["deliveries "+e.Key]++
	}
	want := map[string]int{"evil.example": 100, "deliveries evil.example": 1, "other.example": 1, "deliveries other.example": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", counts, want)
	}
}

// TestAlertDropsOldest: past Queue distinct held alerts the oldest is
// dropped, and the drop reaches the sink as a count.
func TestAlertDropsOldest(t *testing.T) {
	rcv := newReceiver(t)
	o := fast(Sink{Format: FormatJSON, URL: rcv.URL})
	o.Hold, o.Queue = time.Hour, 2
	d := open(t, t.TempDir(), o)
	for i := range 5 {
		d.Raise(Event{Kind: KindEgressDenied, Key: fmt.Sprint(i), Text: "denied"})
	}
	_ = d.Close()
	var keys []string
	dropped := 0
	for _, b := range rcv.got() {
		var e Event
		_ = json.Unmarshal(b, &e)
		if e.Kind == KindDropped {
			dropped += e.Count
			continue
		}
		keys = append(keys, e.Key)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"3", "4"}) || dropped != 3 {
		t.Errorf("delivered %v and a drop count of %d; want the newest two and 3", keys, dropped)
	}
}

// TestAlertRateLimit: beyond Burst, releases wait for the interval.
func TestAlertRateLimit(t *testing.T) {
	now := time.Now()
	d := &Dispatcher{o: Options{Hold: time.Millisecond, Window: time.Minute, Interval: time.Minute, Burst: 2, Queue: 10},
		keys: map[string]*keyState{}, tokens: 2, refilled: now, wake: make(chan struct{}, 1)}
	for i := range 4 {
		d.hold(Event{Kind: KindCanary, Key: fmt.Sprint(i)})
	}
	out, next := d.due(now.Add(time.Second))
	if len(out) != 2 || next <= 0 {
		t.Fatalf("released %d, next in %v; want the burst of 2 and a wait", len(out), next)
	}
	if out, _ := d.due(now.Add(time.Second + 61*time.Second)); len(out) != 1 {
		t.Errorf("a minute later released %d, want 1", len(out))
	}
}

// TestAlertRedacts: the run's credentials and anything shaped like a
// token never reach a receiver.
func TestAlertRedacts(t *testing.T) {
	rcv := newReceiver(t)
	o := fast(Sink{Format: FormatJSON, URL: rcv.URL}, Sink{Format: FormatSlack, URL: rcv.URL + "/slack"})
	o.Redact = secrets.New(map[string]string{"DEPLOY_TOKEN": "s3cr3t-deploy-value"})
	d := open(t, t.TempDir(), o)
	leaks := []string{"ghp_0123456789abcdefghijABCDEFGHIJ0123", "xoxb-1234567890-abcdefghij", "s3cr3t-deploy-value",
		"hunter2hunter2", "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMifQ.c2lnbmF0dXJl", "T000/B000/XXXXXXXX"}
	d.Raise(Event{Kind: KindEgressSensitive, Key: "api.github.com",
		Text:   "the box asked for POST api.github.com/login/oauth/access_token?code=hunter2hunter2 with " + leaks[0] + " " + leaks[1],
		Fields: map[string]string{"auth": "Bearer " + leaks[4], "env": leaks[2], "hook": "https://hooks.slack.com/services/" + leaks[5]}})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got := rcv.got()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
	for _, b := range got {
		for _, l := range leaks {
			if strings.Contains(string(b), l) {
				t.Errorf("the receiver got %q:\n%s", l, b)
			}
		}
		if !strings.Contains(string(b), "[redacted]") {
			t.Errorf("nothing marked redacted: %s", b)
		}
	}
}

// TestAlertSinkCheck: only http(s) URLs with a host, never link-local or
// metadata addresses.
func TestAlertSinkCheck(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://hooks.example.com/x": true, "http://127.0.0.1:9/x": true, "http://10.0.0.5/x": true,
		"ftp://example.com/": false, "file:///etc/passwd": false, "http:///x": false, "example.com/x": false,
		"http://169.254.169.254/latest/meta-data/": false, "http://[fe80::1]/": false, "http://[fd00:ec2::254]/": false,
		"http://metadata.google.internal/": false, "http://0.0.0.0/": false,
	} {
		err := Sink{Format: FormatJSON, URL: u}.Check()
		if (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", u, err, ok)
		}
	}
	if err := (Sink{Format: "xml", URL: "https://example.com"}).Check(); err == nil {
		t.Error("an unknown format was taken")
	}
}

// TestAlertNoDialToLinkLocal: the client refuses a link-local address at
// dial time too, whatever the URL said (a name that resolves there).
func TestAlertNoDialToLinkLocal(t *testing.T) {
	o := post(t.Context(), newClient(), "http://169.254.169.254/", []byte("{}"))
	if o.err == nil || !strings.Contains(o.err.Error(), "refusing to dial") {
		t.Errorf("got %+v, want a refusal to dial", o)
	}
}

// TestAlertForeign: a repository is foreign when the run knows its own
// and it is none of them.
func TestAlertForeign(t *testing.T) {
	d := &Dispatcher{repos: map[string]bool{"acme/app": true, "/srv/git/app.git": true}}
	for repo, want := range map[string]bool{"acme/app": false, "ACME/App": false, "acme/other": true, "/srv/git/app.git": false, "/tmp/x": true, "": false} {
		if got := d.Foreign(repo); got != want {
			t.Errorf("Foreign(%q) = %v, want %v", repo, got, want)
		}
	}
	if (&Dispatcher{repos: map[string]bool{}}).Foreign("acme/other") {
		t.Error("foreign with no repository known")
	}
}
