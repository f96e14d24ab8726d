package inbox_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/inbox"
)

// decideWith rejects rev-1 with a request whose headers (several values
// each allowed) and extra form fields the test sets, and returns the
// status and who the recorded decision names.
func decideWith(t *testing.T, w *world, hdr http.Header, extra url.Values) (int, string) {
	t.Helper()
	c := client(nil)
	req, _ := http.NewRequest("GET", w.ts.URL+"/review/0/rev-1", nil)
	req.Header = hdr.Clone()
	resp, err := c.Do(req)
	must(t, err)
	body := readAll(resp)
	if resp.StatusCode != 200 {
		return resp.StatusCode, ""
	}
	form := url.Values{"verdict": {"reject"}, "note": {"no"}, "csrf": {csrfIn(body)}}
	for k, v := range extra {
		form[k] = v
	}
	req, _ = http.NewRequest("POST", w.ts.URL+"/review/0/rev-1/decide", strings.NewReader(form.Encode()))
	req.Header = hdr.Clone()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(req)
	must(t, err)
	resp.Body.Close()
	return resp.StatusCode, lastBy(w)
}

// markupName is a person's name that is also markup.
const markupName = `<img/src=x/onerror=alert(1)>"'&`

// TestAttackProxyHeaderSpoofs attacks the trusted proxy header from a
// client that is, or talks through, the proxy: a second copy of the
// header (a proxy that adds its header after the client's leaves the
// client's first), X-Forwarded-For, Forwarded and X-Real-IP claiming the
// proxy's address from another one, and names that are markup or that
// display other than they read.
func TestAttackProxyHeaderSpoofs(t *testing.T) {
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	elsewhere, err := inbox.ParseProxies([]string{"10.0.0.0/8", "::ffff:192.0.2.1"})
	must(t, err)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name    string
		proxies []netip.Prefix
		hdr     http.Header
		code    int
		by      string
	}{
		{"client's copy first, proxy's second", loop, hdr("X-Forwarded-User", "mallory", "X-Forwarded-User", "carol"), http.StatusUnauthorized, ""},
		{"forwarded-for claims the proxy", elsewhere, hdr("X-Forwarded-User", "mallory", "X-Forwarded-For", "10.0.0.1",
			"Forwarded", "for=10.0.0.1", "X-Real-IP", "10.0.0.1"), http.StatusUnauthorized, ""},
		{"forwarded-for chain ending at the proxy", elsewhere, hdr("X-Forwarded-User", "mallory", "X-Forwarded-For", "127.0.0.1, 10.0.0.1"), http.StatusUnauthorized, ""},
		{"mapped proxy address, loopback client", elsewhere, hdr("X-Forwarded-User", "mallory", "X-Forwarded-For", "::ffff:192.0.2.1"), http.StatusUnauthorized, ""},
		{"a right-to-left override in the name", loop, hdr("X-Forwarded-User", "eve\u202enimda"), http.StatusUnauthorized, ""},
		{"an isolate in the name", loop, hdr("X-Forwarded-User", "eve\u2067x\u2069"), http.StatusUnauthorized, ""},
		{"markup in the name is a name", loop, hdr("X-Forwarded-User", markupName), http.StatusSeeOther, markupName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorldWith(t, func(o *inbox.Options) {
				o.People = &inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: c.proxies}
			})
			code, by := decideWith(t, w, c.hdr, nil)
			if code != c.code || by != c.by {
				t.Fatalf("%d by %q (%v); want %d by %q", code, by, w.acts.list(), c.code, c.by)
			}
		})
	}
}

// TestAttackByFormFieldIgnored: the recorded person comes from the
// request's sign-in, never from what the form or an unconfigured header
// says.
func TestAttackByFormFieldIgnored(t *testing.T) {
	w := newWorld(t, "")
	code, by := decideWith(t, w, http.Header{"X-Forwarded-User": {"mallory"}, "X-Remote-User": {"mallory"}},
		url.Values{"by": {"mallory"}, "person": {"mallory"}, "user": {"mallory"}})
	if code != http.StatusSeeOther || by != "tester" {
		t.Fatalf("%d by %q, want the server's own name", code, by)
	}
	c := client(nil)
	code, _ = postForm(t, w, c, "/run/0/run-handoff", "/run/0/run-handoff/answer",
		url.Values{"node": {"implement"}, "note": {"go on"}, "by": {"mallory"}})
	if calls := w.acts.list(); code != http.StatusSeeOther || !strings.HasSuffix(calls[len(calls)-1], " tester") {
		t.Fatalf("answer: %d, %v", code, calls)
	}
}

// TestAttackTokenFileOthersCanRead: a token file another account can
// read (or write) gives every holder's sign-in to that account; it is
// refused, as ssh refuses such a key.
func TestAttackTokenFileOthersCanRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, aliceTok+" alice\n")
	for _, mode := range []os.FileMode{0o644, 0o640, 0o606, 0o620} {
		must(t, os.Chmod(file, mode))
		if _, err := inbox.LoadTokens(file); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %v: %v, want a refusal naming chmod 600", mode, err)
		}
	}
	must(t, os.Chmod(file, 0o600))
	if toks, err := inbox.LoadTokens(file); err != nil || toks[aliceTok] != "alice" {
		t.Fatalf("mode 0600: %v %v", toks, err)
	}
}

// TestAttackLoginFromAnotherSite: a token holder (mallory) sends alice a
// link, or has a page of hers navigate, to the inbox with ?token= of
// mallory's own. Followed from another site it must not sign alice's
// browser out of her own name and into mallory's, where every decision
// alice then makes would be recorded as mallory's.
func TestAttackLoginFromAnotherSite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, aliceTok+" alice\n"+bobTok+" mallory\n")
	must(t, os.Chmod(file, 0o600))
	toks, err := inbox.LoadTokens(file)
	must(t, err)
	w := newWorldWith(t, func(o *inbox.Options) { o.People = &inbox.People{Tokens: toks} })
	alice := client(nil)
	if code, _ := get(t, alice, w.ts.URL+"/?token="+aliceTok); code != http.StatusSeeOther {
		t.Fatalf("alice's login: %d", code)
	}
	// What a browser sends following a link or a script from elsewhere.
	req, _ := http.NewRequest("GET", w.ts.URL+"/reviews?token="+bobTok, nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := alice.Do(req)
	must(t, err)
	resp.Body.Close()
	if code, by := decideAs(t, w, alice), lastBy(w); code != http.StatusSeeOther || by != "alice" {
		t.Fatalf("after a cross-site login link, alice's decision: %d by %q", code, by)
	}
	// Her own link, typed or pasted (no other site), still signs in.
	fresh := client(nil)
	req, _ = http.NewRequest("GET", w.ts.URL+"/reviews?token="+bobTok, nil)
	req.Header.Set("Sec-Fetch-Site", "none")
	resp, err = fresh.Do(req)
	must(t, err)
	resp.Body.Close()
	if code, by := decideAs(t, w, fresh), lastBy(w); code != http.StatusSeeOther || by != "mallory" {
		t.Fatalf("a login typed into a fresh browser: %d by %q", code, by)
	}
}
