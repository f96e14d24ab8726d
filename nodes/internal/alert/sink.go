package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The formats a sink takes.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
)

// Sink is where alerts go: an http(s) URL and the payload's format.
type Sink struct {
	// Format is FormatJSON (the Event as JSON, with a version) or
	// FormatSlack (Slack's incoming-webhook message).
	Format string
	// URL receives a POST per alert. A Slack webhook URL is itself a
	// secret: it is never written to the run directory (see Name).
	URL string
	// Name identifies the sink in alerts-delivered.jsonl and on resume
	// (default: the format and the URL's scheme and host). It must not
	// hold a secret.
	Name string
}

func (s Sink) name() string {
	if s.Name != "" {
		return s.Name
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return s.Format
	}
	return s.Format + " " + u.Scheme + "://" + u.Host
}

// metadataHosts are cloud instance-metadata names; their addresses are
// link-local, refused at dial time too.
var metadataHosts = map[string]bool{"metadata.google.internal": true, "metadata": true, "instance-data": true, "metadata.azure.com": true}

// Check refuses a sink the harness will not post to: a format it does not
// know, a URL that is not http(s) with a host, or one naming a link-local
// or metadata address (where a cloud machine's own credentials live).
func (s Sink) Check() error {
	if s.Format != FormatJSON && s.Format != FormatSlack {
		return fmt.Errorf("alert sink: unknown format %q (want %s or %s)", s.Format, FormatJSON, FormatSlack)
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("alert sink %s: want an http(s) URL with a host", s.name())
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if metadataHosts[host] {
		return fmt.Errorf("alert sink %s: %s is a cloud metadata service", s.name(), host)
	}
	if a, err := netip.ParseAddr(host); err == nil && forbidden(a) {
		return fmt.Errorf("alert sink %s: %s is a link-local or metadata address", s.name(), host)
	}
	return nil
}

// forbidden: link-local (169.254/16 holds the metadata service of most
// clouds), AWS's IPv6 metadata address, unspecified and multicast.
func forbidden(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsMulticast() ||
		a == netip.MustParseAddr("fd00:ec2::254")
}

// newClient is the harness's client for sinks: no redirects (a 3xx is a
// refusal, not a way to reach another address) and no dial to a forbidden
// address, whatever a name resolves to.
func newClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, _ := net.SplitHostPort(address)
		if a, err := netip.ParseAddr(host); err == nil && forbidden(a) {
			return fmt.Errorf("alert sink: refusing to dial %s (link-local or metadata)", host)
		}
		return nil
	}}
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// payload is the body a sink receives for e.
func (s Sink) payload(e Event) ([]byte, error) {
	if s.Format == FormatSlack {
		return json.Marshal(slackMessage(e))
	}
	return json.Marshal(struct {
		Version int    `json:"version"`
		Source  string `json:"source"`
		Event
	}{1, "sandgate", e})
}

// slackMessage is Slack's incoming-webhook message: text (the fallback a
// notification shows) and blocks (a section and a context line). Slack
// reads &, < and > as markup, so the text escapes them.
func slackMessage(e Event) map[string]any {
	head := fmt.Sprintf("sandgate alert: %s", e.Text)
	if e.Count > 1 {
		head += fmt.Sprintf(" (×%d)", e.Count)
	}
	ctx := fmt.Sprintf("%s · run %s", e.Kind, e.Run)
	if e.Node != "" {
		ctx += " · node " + e.Node
	}
	ctx += " · " + e.Time.UTC().Format(time.RFC3339)
	blocks := []any{
		map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": slackEscape(head)}},
		map[string]any{"type": "context", "elements": []any{map[string]any{"type": "mrkdwn", "text": slackEscape(ctx)}}},
	}
	return map[string]any{"text": slackEscape(head), "blocks": blocks}
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func slackEscape(s string) string { return slackEscaper.Replace(s) }

// outcome is one attempt's result: the HTTP status (0 without one), how
// long the receiver asked to wait, whether trying again may help.
type outcome struct {
	status     int
	retryAfter time.Duration
	retry      bool
	err        error
}

// post sends body once.
func post(ctx context.Context, c *http.Client, rawURL string, body []byte) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return outcome{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sandgate-alerts/1")
	resp, err := c.Do(req)
	if err != nil {
		// The URL (a Slack webhook's is a secret) stays out of the record.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return outcome{err: err, retry: ctx.Err() == nil}
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	o := outcome{status: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return o
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		o.retry = true
		o.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	o.err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	return o
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
