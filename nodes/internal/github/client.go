package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// APIBase is GitHub's REST API, where a GitHub token may always go; the
// ci and review nodes' base_url fields declare it as their trusted
// prefix (nodes tests that the declarations agree).
const APIBase = "https://api.github.com"

// CheckURL refuses to send a token to url unless it is under APIBase or
// a prefix the operator allowed (--allow-endpoint).
func CheckURL(url string, allowed []string) error {
	return blueprint.CheckEndpoint(blueprint.Field{Endpoint: true, Trusted: []string{APIBase}}, url, allowed)
}

// Client sends authenticated requests to one API base.
type Client struct {
	// Base is the API base URL (https://api.github.com, or an Enterprise
	// server's /api/v3).
	Base string
	// Allowed are the operator's URL prefixes the token may go to
	// besides APIBase.
	Allowed []string
	// Token gives the token, asked for after the URL was allowed and
	// before each request.
	Token func() (string, error)
	// Name names the URL's setting in a refusal ("review base_url");
	// empty leaves the refusal as CheckURL words it.
	Name string
	// Timeout bounds each request, zero none; Deadline bounds every
	// request, zero none.
	Timeout  time.Duration
	Deadline time.Time
	// MaxBody caps what is read of an answer.
	MaxBody int64
}

// FromEnv is a client whose token is read from the environment variable
// tokenEnv at every request, as the review node and the review queue
// use it: requests bounded to a minute, answers to 1 MiB.
func FromEnv(base, tokenEnv string, allowed []string) *Client {
	return &Client{Base: base, Allowed: allowed, Name: "review base_url", Timeout: 60 * time.Second, MaxBody: 1 << 20,
		Token: func() (string, error) {
			tok := os.Getenv(tokenEnv)
			if tok == "" {
				return "", fmt.Errorf("review queue github: %s is not set in this environment", tokenEnv)
			}
			return tok, nil
		}}
}

// Reply is one answer from GitHub.
type Reply struct {
	Status int
	Body   []byte
	Header http.Header
}

// NetError is a request that got no answer: the connection or the read
// failed, or the client's Deadline cut it off (Deadline). Its text is
// the transport's.
type NetError struct {
	Err      error
	Deadline bool
}

func (e *NetError) Error() string { return e.Err.Error() }
func (e *NetError) Unwrap() error { return e.Err }

// Do sends payload as JSON (nil sends no body) to path under Base, or to
// path itself when it starts with http, and returns the answer.
func (c *Client) Do(ctx context.Context, method, path string, payload any) (*Reply, error) {
	target, checked := path, path
	if !strings.HasPrefix(path, "http") {
		target, checked = strings.TrimRight(c.Base, "/")+path, c.Base
	}
	// The loader checked a blueprint's base_url; this holds for nodes that
	// did not come through it and for a queue entry someone edited,
	// before any connection.
	for _, u := range []string{checked, target} {
		if err := CheckURL(u, c.Allowed); err != nil {
			return nil, c.refused(err)
		}
	}
	tok, err := c.Token()
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if payload != nil {
		b, _ := json.Marshal(payload)
		body = bytes.NewReader(b)
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !c.Deadline.IsZero() {
		rctx, cancel = context.WithDeadline(ctx, c.Deadline)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, target, body)
	if err != nil {
		return nil, err
	}
	authorize(req, tok)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: c.Timeout, CheckRedirect: c.checkRedirect}
	resp, err := client.Do(req)
	if err != nil {
		return nil, netError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.MaxBody))
	if err != nil {
		return nil, netError(ctx, rctx, err)
	}
	return &Reply{Status: resp.StatusCode, Body: data, Header: resp.Header}, nil
}

// Send is Do for callers that read only the answer's status and body.
func (c *Client) Send(ctx context.Context, method, path string, payload any) (int, []byte, error) {
	r, err := c.Do(ctx, method, path, payload)
	if err != nil {
		return 0, nil, err
	}
	return r.Status, r.Body, nil
}

func (c *Client) refused(err error) error {
	if c.Name == "" {
		return err
	}
	return fmt.Errorf("%s: %w", c.Name, err)
}

// checkRedirect follows a redirect only to a URL the token may go to: Go
// drops the Authorization header only on a redirect to another domain, not
// to a subdomain, another port or another path.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if err := CheckURL(req.URL.String(), c.Allowed); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	return nil
}

func authorize(req *http.Request, token string) {
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
}

// netError marks a failed request, and whether the client's own deadline
// (not the caller's context) ended it.
func netError(ctx, rctx context.Context, err error) error {
	return &NetError{Err: err, Deadline: ctx.Err() == nil && rctx.Err() != nil}
}

// RateLimited reads GitHub's rate-limit answers: Retry-After on a 429 or
// 403, x-ratelimit-remaining: 0 with x-ratelimit-reset (epoch seconds),
// or a bare 429 or a 403 whose body names a (secondary) rate limit, for
// which GitHub says to wait at least a minute. The ci and review nodes
// share it.
func RateLimited(status int, h http.Header, body []byte, now time.Time) (time.Duration, bool) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		return max(time.Duration(s)*time.Second, time.Second), true
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			// A second more: the reset time is whole seconds.
			return max(time.Unix(reset, 0).Sub(now)+time.Second, time.Second), true
		}
		return time.Minute, true
	}
	if status == http.StatusTooManyRequests || strings.Contains(strings.ToLower(string(body)), "rate limit") {
		return time.Minute, true
	}
	return 0, false
}

// APIError is GitHub's error payload.
type APIError struct {
	Message string `json:"message"`
	Errors  []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

func (e APIError) String() string {
	msg := e.Message
	for _, x := range e.Errors {
		msg += "; " + x.Message
	}
	return msg
}
