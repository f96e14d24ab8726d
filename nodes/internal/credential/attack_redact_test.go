package credential_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/runtime"
)

// echoingAPI is a hostile GitHub Enterprise in front of the double: it
// opens the pull request, then answers with the token it was sent in
// the pull request's URL and title, the way a server that reflects its
// request would.
func echoingAPI(t *testing.T) func(gh *ghfake.Server) string {
	return func(gh *ghfake.Server) string {
		target, _ := url.Parse(gh.API.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ModifyResponse = func(resp *http.Response) error {
			req := resp.Request
			if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/pulls") {
				return nil
			}
			tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
			b, _ := io.ReadAll(resp.Body)
			b = bytes.Replace(b, []byte(`"html_url":"`), []byte(`"html_url":"https://github.com/acme/calc/pull/1?echo=`+tok+`#`), 1)
			b = bytes.Replace(b, []byte(`"title":"`), []byte(`"title":"`+tok+` `), 1)
			resp.Body = io.NopCloser(bytes.NewReader(b))
			resp.ContentLength = int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		}
		srv := httptest.NewServer(proxy)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// TestAttackTokenEchoedByTheAPIIsRedacted: the API the review talks to
// puts the minted token into what it answers, which the review records
// (the pull request's URL goes into the run's outputs, journal and
// trace). Every minted token is in the run's redactor before it is used,
// so no file of the run holds it, though the review node never struck it
// from those answers itself.
func TestAttackTokenEchoedByTheAPIIsRedacted(t *testing.T) {
	a := newAppRunVia(t, nil, echoingAPI(t))
	sum := a.h.Run(t, a.src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	toks := a.mustBeDead(t)
	if len(toks) != 2 {
		t.Fatalf("minted %d tokens", len(toks))
	}
	mustNotHold(t, sum.Dir, toks)
}
