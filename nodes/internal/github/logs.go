package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// JobLog reads the tail of an Actions job's log at path (under Base,
// e.g. /repos/o/r/actions/jobs/7/logs). GitHub answers with a redirect to
// short-lived storage on another host; that request is made anew without
// the token, whatever host it names.
func (c *Client) JobLog(ctx context.Context, path string) (string, error) {
	u := strings.TrimRight(c.Base, "/") + path
	if err := CheckURL(u, c.Allowed); err != nil {
		return "", c.refused(err)
	}
	tok, err := c.Token()
	if err != nil {
		return "", err
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !c.Deadline.IsZero() {
		rctx, cancel = context.WithDeadline(ctx, c.Deadline)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	authorize(req, tok)
	stop := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := stop.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return readTail(resp.Body), nil
	case http.StatusFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil || (loc.Scheme != "https" && loc.Scheme != "http") {
		return "", fmt.Errorf("the log redirect names no http(s) URL")
	}
	return fetchPlain(rctx, loc.String())
}

// fetchPlain GETs a URL with no credential at all: a fresh request, so no
// header of the API request can follow it.
func fetchPlain(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("log download: HTTP %d", resp.StatusCode)
	}
	return readTail(resp.Body), nil
}

// readTail reads up to 64 MiB and keeps the last 256 KiB: a log's
// failure is at its end, and only a few lines of it reach the feedback.
func readTail(r io.Reader) string {
	const keep = 256 << 10
	var b []byte
	buf := make([]byte, 64<<10)
	lr := io.LimitReader(r, 64<<20)
	for {
		n, err := lr.Read(buf)
		b = append(b, buf[:n]...)
		if len(b) > 2*keep {
			b = b[:copy(b, b[len(b)-keep:])]
		}
		if err != nil {
			break
		}
	}
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
