package inbox_test

import (
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/inbox"
)

const (
	aliceTok = "alice-0123456789abcdef"
	bobTok   = "bob-0123456789abcdef00"
)

// headers adds fixed headers to every request of a client.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

func client(h map[string]string) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: headers{h, http.DefaultTransport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// decideAs loads the review page and rejects with c, returning the status.
func decideAs(t *testing.T, w *world, c *http.Client) int {
	t.Helper()
	code, body := get(t, c, w.ts.URL+"/review/0/rev-1")
	if code != 200 {
		return code
	}
	tok := csrfIn(body)
	resp, err := c.PostForm(w.ts.URL+"/review/0/rev-1/decide", url.Values{"verdict": {"reject"}, "note": {"no"}, "csrf": {tok}})
	must(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func csrfIn(body string) string {
	_, rest, _ := strings.Cut(body, `name="csrf" value="`)
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

func lastBy(w *world) string {
	calls := w.acts.list()
	if len(calls) == 0 {
		return ""
	}
	f := strings.Fields(calls[len(calls)-1])
	return f[len(f)-1]
}

// TestNamedTokensRecordThePerson: each token file holder's decisions are
// recorded under their own name, by Bearer header or by login cookie.
func TestNamedTokensRecordThePerson(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, "# team\n"+aliceTok+" alice\n\n"+bobTok+" Bob Builder\n")
	must(t, os.Chmod(file, 0o600))
	toks, err := inbox.LoadTokens(file)
	must(t, err)
	w := newWorldWith(t, func(o *inbox.Options) { o.People = &inbox.People{Tokens: toks} })
	if code := decideAs(t, w, client(map[string]string{"Authorization": "Bearer " + aliceTok})); code != http.StatusSeeOther || lastBy(w) != "alice" {
		t.Fatalf("alice: %d, recorded %v", code, w.acts.list())
	}
	bob := client(nil)
	if code, _ := get(t, bob, w.ts.URL+"/reviews?token="+bobTok); code != http.StatusSeeOther {
		t.Fatalf("bob's login: %d", code)
	}
	if code := decideAs(t, w, bob); code != http.StatusSeeOther || !strings.HasSuffix(w.acts.list()[1], `"no" Bob Builder`) {
		t.Fatalf("bob: %d, recorded %v", code, w.acts.list())
	}
	if code := decideAs(t, w, client(map[string]string{"Authorization": "Bearer " + aliceTok + "x"})); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", code)
	}
}

// TestProxyHeaderOnlyFromTrustedProxies attacks the proxy header: sent by
// a client that is not a trusted proxy it names no one, whatever it says.
func TestProxyHeaderOnlyFromTrustedProxies(t *testing.T) {
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	elsewhere := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct {
		name    string
		people  inbox.People
		hdr     map[string]string
		code    int
		by      string
		comment string
	}{
		{"trusted proxy names carol", inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: loop},
			map[string]string{"X-Forwarded-User": "carol"}, http.StatusSeeOther, "carol", ""},
		{"untrusted address claims mallory", inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: elsewhere},
			map[string]string{"X-Forwarded-User": "mallory"}, http.StatusUnauthorized, "", "no token, not a proxy: refused"},
		{"untrusted address claims mallory with alice's token", inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: elsewhere, Tokens: map[string]string{aliceTok: "alice"}},
			map[string]string{"X-Forwarded-User": "mallory", "Authorization": "Bearer " + aliceTok}, http.StatusSeeOther, "alice", ""},
		{"trusted proxy names no one", inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: loop},
			map[string]string{"X-Forwarded-User": " "}, http.StatusUnauthorized, "", ""},
		{"trusted proxy, another header", inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: loop},
			map[string]string{"X-Remote-User": "mallory"}, http.StatusUnauthorized, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorldWith(t, func(o *inbox.Options) { o.People = &c.people })
			code := decideAs(t, w, client(c.hdr))
			if code != c.code || lastBy(w) != c.by {
				t.Fatalf("%d, recorded %v; want %d by %q", code, w.acts.list(), c.code, c.by)
			}
		})
	}
}

func TestLoadTokensReportsEveryBadLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, file, "short alice\n"+aliceTok+"\n"+bobTok+" bob\n"+bobTok+" eve\n")
	must(t, os.Chmod(file, 0o600))
	_, err := inbox.LoadTokens(file)
	for _, want := range []string{file + ":1: token: shorter", file + ":2: name:", file + ":4: token: given twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	must(t, os.WriteFile(empty, []byte("# none\n"), 0o600))
	if _, err := inbox.LoadTokens(empty); err == nil {
		t.Error("a token file without tokens was accepted")
	}
}

func TestParseProxies(t *testing.T) {
	got, err := inbox.ParseProxies([]string{"10.1.2.3", "192.168.0.0/16", "::1"})
	must(t, err)
	if len(got) != 3 || got[0].String() != "10.1.2.3/32" || got[2].String() != "::1/128" {
		t.Fatalf("%v", got)
	}
	if _, err := inbox.ParseProxies([]string{"proxy.example"}); err == nil {
		t.Fatal("a host name was accepted as a trusted proxy")
	}
	for _, wide := range []string{"0.0.0.0/0", "::/0", "128.0.0.0/1", "10.0.0.0/7", "fd00::/8"} {
		if _, err := inbox.ParseProxies([]string{"10.1.2.3", wide}); err == nil || !strings.Contains(err.Error(), "anyone there could sign in as anyone") {
			t.Errorf("%s accepted as a trusted proxy: %v", wide, err)
		}
	}
	if _, err := inbox.ParseProxies([]string{"10.0.0.0/8", "fd00::/16"}); err != nil {
		t.Errorf("a private network refused: %v", err)
	}
}

// TestPagesShowWhoIsSignedIn: every page says under which name decisions
// are recorded, so a sign-in as the wrong person (a shared browser, a
// token link someone sent) is visible before anything is decided; the
// name is text (a proxy may send any printable characters), and page
// text cannot forge the place it goes.
func TestPagesShowWhoIsSignedIn(t *testing.T) {
	const odd = `Eve <b>&amp; "co"</b>`
	w := newWorldWith(t, func(o *inbox.Options) {
		o.People = &inbox.People{ProxyHeader: "X-Forwarded-User", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			Tokens: map[string]string{aliceTok: "alice"}}
	})
	for _, tc := range []struct {
		hdr  map[string]string
		want string
	}{
		{map[string]string{"Authorization": "Bearer " + aliceTok}, "signed in as <b>alice</b>"},
		{map[string]string{"X-Forwarded-User": odd}, "signed in as <b>" + html.EscapeString(odd) + "</b>"},
	} {
		c := client(tc.hdr)
		for _, page := range []string{"/", "/run/0/run-ok", "/handoffs", "/reviews", "/review/0/rev-1", "/start"} {
			_, body := get(t, c, w.ts.URL+page)
			if n := strings.Count(body, `<span class="who"`); n != 1 || !strings.Contains(body, tc.want) {
				t.Errorf("%s shows %d sign-ins, want one reading %q:\n%.600s", page, n, tc.want, body)
			}
			if strings.Contains(body, "<!--sandgate:who-->") {
				t.Errorf("%s left the marker in the page", page)
			}
		}
	}
}
