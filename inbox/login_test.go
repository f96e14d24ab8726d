package inbox_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestLoginRedirectStaysOnTheInbox: the ?token= login redirects to the
// same page without the token. A crafted path must not turn that into a
// redirect to another site (an open redirect that carries the victim off
// with a fresh session).
func TestLoginRedirectStaysOnTheInbox(t *testing.T) {
	w := newWorld(t, "s3cret")
	addr := strings.TrimPrefix(w.ts.URL, "http://")
	for _, target := range []string{"//evil.example/x", "/\\evil.example/x", "//evil.example", "/%2Fevil.example", "/.//evil.example", "///evil.example"} {
		// A raw request: Go's client would clean the path itself.
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		fmt.Fprintf(conn, "GET %s?token=s3cret HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must(t, err)
		resp.Body.Close()
		conn.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 == 3 && (strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.Contains(loc, "://")) {
			t.Errorf("GET %s?token=…: redirects off the inbox to %q", target, loc)
		}
		if c := resp.Cookies(); len(c) > 0 && (!c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode) {
			t.Errorf("login cookie %+v is readable by script or sent cross-site", c[0])
		}
	}
}
