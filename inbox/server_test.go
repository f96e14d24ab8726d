package inbox_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/runtime"
)

func TestPagesShowRunsEscaped(t *testing.T) {
	w := newWorld(t, "")
	c := w.ts.Client()
	code, body := get(t, c, w.ts.URL+"/")
	if code != 200 || !strings.Contains(body, "run-ok") || !strings.Contains(body, "run-handoff") {
		t.Fatalf("list: %d\n%s", code, body)
	}
	if _, body := get(t, c, w.ts.URL+"/?status=handed_off"); strings.Contains(body, `href="/run/0/run-ok"`) || !strings.Contains(body, "run-handoff") {
		t.Fatalf("status filter kept the wrong runs:\n%s", body)
	}
	code, body = get(t, c, w.ts.URL+"/run/0/run-ok")
	if code != 200 {
		t.Fatalf("run page: %d %s", code, body)
	}
	for _, want := range []string{`data-node="implement" data-state="pass" data-attempts="2"`, `data-node="check" data-state="pass" data-attempts="2"`,
		`data-node="done" data-state="pass"`, `class="waterfall"`, "TestX/", "step.log"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	for _, page := range []string{"/run/0/run-ok", "/run/0/run-handoff", "/handoffs", "/reviews", "/review/0/rev-1"} {
		_, body := get(t, c, w.ts.URL+page)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders repository text as HTML", page)
		}
		if regexp.MustCompile(`<script>[^<]`).MatchString(body) || strings.Contains(body, " style=") {
			t.Errorf("%s has inline script or style", page)
		}
	}
	// A narrow reviews table wraps a branch after its slashes only.
	if _, body := get(t, c, w.ts.URL+"/reviews"); !strings.Contains(body, `<code class="path">sandgate/<wbr>fix-&lt;script&gt;`) {
		t.Errorf("reviews table does not break the branch after its slash:\n%s", body)
	}
}

func TestNonLoopbackNeedsToken(t *testing.T) {
	cases := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7777", "", true},
		{"[::1]:7777", "", true},
		{"localhost:7777", "", true},
		{"0.0.0.0:7777", "", false},
		{":7777", "", false},
		{"192.168.1.2:7777", "", false},
		{"0.0.0.0:7777", "secret", true},
	}
	for _, c := range cases {
		if err := inbox.CheckAddr(c.addr, c.token); (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, %q) = %v", c.addr, c.token, err)
		}
	}
}

func TestTokenRequired(t *testing.T) {
	w := newWorld(t, "s3cret")
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, u := range []string{"/", "/run/0/run-ok", "/reviews", "/?token=wrong", "/assets/live.js"} {
		if code, _ := get(t, plain, w.ts.URL+u); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", u, code)
		}
	}
	req, _ := http.NewRequest("GET", w.ts.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	if resp, err := plain.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("bearer: %v %v", resp.StatusCode, err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	if code, body := get(t, browser, w.ts.URL+"/run/0/run-ok?token=s3cret"); code != 200 || !strings.Contains(body, "run-ok") {
		t.Fatalf("login by ?token=: %d", code)
	}
	if code, _ := get(t, browser, w.ts.URL+"/reviews"); code != 200 {
		t.Fatalf("the login cookie is not accepted: %d", code)
	}
}

// TestRebindingHostRefused: without a token, a request naming another host
// (a DNS-rebinding page) is refused.
func TestRebindingHostRefused(t *testing.T) {
	w := newWorld(t, "")
	req, _ := http.NewRequest("GET", w.ts.URL+"/", nil)
	req.Host = "evil.example:80"
	resp, err := w.ts.Client().Do(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("Host evil.example: %v %v", resp.StatusCode, err)
	}
}

// csrfOf loads a page with a cookie jar and returns its form token.
func csrfOf(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	_, body := get(t, c, u)
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field on %s", u)
	}
	return m[1]
}

func TestStateChangesNeedSameOriginAndCSRF(t *testing.T) {
	w := newWorld(t, "")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tok := csrfOf(t, c, w.ts.URL+"/run/0/run-handoff")
	post := func(path string, form url.Values, hdr map[string]string) int {
		req, _ := http.NewRequest("POST", w.ts.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	answer := url.Values{"node": {"implement"}, "note": {"use the other API"}}
	withTok := url.Values{"node": {"implement"}, "note": {"use the other API"}, "csrf": {tok}}
	wrong := url.Values{"node": {"implement"}, "csrf": {strings.Repeat("0", 64)}}
	attacks := []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"no token", answer, nil},
		{"wrong token", wrong, nil},
		{"cross-site origin", withTok, map[string]string{"Origin": "https://evil.example"}},
		{"cross-site fetch", withTok, map[string]string{"Sec-Fetch-Site": "cross-site"}},
	}
	for _, a := range attacks {
		if code := post("/run/0/run-handoff/answer", a.form, a.hdr); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", a.name, code)
		}
		if code := post("/review/0/rev-1/decide", url.Values{"verdict": {"approve"}, "csrf": a.form["csrf"]}, a.hdr); code != http.StatusForbidden {
			t.Errorf("decide, %s: %d, want 403", a.name, code)
		}
	}
	if len(w.acts.list()) != 0 {
		t.Fatalf("refused requests reached the actions: %v", w.acts.list())
	}
	if code := post("/run/0/run-handoff/answer", url.Values{"node": {"done"}, "csrf": {tok}}, nil); code != http.StatusBadRequest {
		t.Errorf("answer at a terminal node: %d, want 400", code)
	}
	if code := post("/run/0/run-handoff/answer", withTok, map[string]string{"Origin": w.ts.URL}); code != http.StatusSeeOther {
		t.Errorf("same-origin answer: %d", code)
	}
	if code := post("/review/0/rev-1/decide", url.Values{"verdict": {"reject"}, "note": {"too big"}, "csrf": {tok}}, nil); code != http.StatusSeeOther {
		t.Errorf("decide: %d", code)
	}
	want := []string{`answer run-handoff implement "use the other API" tester`, `decide reviews rev-1 false "too big" tester`}
	if got := w.acts.list(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("actions got\n%v\nwant\n%v", got, want)
	}
}

func TestTraversalRefused(t *testing.T) {
	w := newWorld(t, "")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "TOPSECRET")
	writeFile(t, filepath.Join(outside, "evil", "events.jsonl"), `{"seq":1,"type":"run_started","run_id":"TOPSECRET"}`+"\n")
	must(t, os.Symlink(filepath.Join(outside, "evil"), filepath.Join(w.runs, "linked")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(w.runs, "run-ok", "nodes", "check", "1", "leak.log")))
	must(t, os.Symlink(outside, filepath.Join(w.reviews, "rev-linked")))
	c := w.ts.Client()
	paths := []string{
		"/run/0/..", "/run/0/..%2F..%2F", "/run/0/%2e%2e", "/run/0/run-ok%2F..%2F..",
		"/run/0/linked", "/run/0/linked/live", "/run/0/linked/events",
		"/run/1/run-ok", "/run/-1/run-ok",
		"/run/0/run-ok/file/..%2F..%2Fsecret.txt", "/run/0/run-ok/file/nodes/check/1/leak.log",
		"/run/0/run-ok/file/%2e%2e/run-handoff/meta.json", "/run/0/run-ok/file/nodes%2F..%2F..%2Frun-handoff%2Fmeta.json",
		"/review/0/..%2F..%2F", "/review/0/rev-linked", "/review/0/%2e%2e",
	}
	for _, p := range paths {
		code, body := get(t, c, w.ts.URL+p)
		if code == 200 || strings.Contains(body, "TOPSECRET") {
			t.Errorf("%s: %d %.80q", p, code, body)
		}
	}
	if _, body := get(t, c, w.ts.URL+"/"); strings.Contains(body, "linked") {
		t.Error("the list shows a run whose directory is a symlink out of the runs directory")
	}
	if _, body := get(t, c, w.ts.URL+"/reviews"); strings.Contains(body, "rev-linked") {
		t.Error("the queue shows an entry whose directory is a symlink out of the queue")
	}
	if code, _ := get(t, c, w.ts.URL+"/run/0/run-ok/file/nodes/check/1/step.log"); code != 200 {
		t.Errorf("a genuine log file: %d", code)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAnswerNotHandedOff: answering a run that succeeded is the request's
// mistake: 409 with the reason, and the actions are never called (the
// CLI's would have left an answer log behind).
func TestAnswerNotHandedOff(t *testing.T) {
	w := newWorld(t, "")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tok := csrfOf(t, c, w.ts.URL+"/run/0/run-handoff") // the session's token; run-ok has no form
	form := url.Values{"node": {"implement"}, "note": {"try again"}, "csrf": {tok}}
	req, _ := http.NewRequest("POST", w.ts.URL+"/run/0/run-ok/answer", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "run run-ok is succeeded, not handed off") {
		t.Fatalf("%d\n%s", resp.StatusCode, body)
	}
	if got := w.acts.list(); len(got) != 0 {
		t.Fatalf("the actions were called: %v", got)
	}
}

// TestAnswerNoteTooLong: a note the journal would refuse is refused here,
// before the answer process starts (it failed with a 500 and left its
// answer log behind).
func TestAnswerNoteTooLong(t *testing.T) {
	w := newWorld(t, "")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tok := csrfOf(t, c, w.ts.URL+"/run/0/run-handoff")
	form := url.Values{"node": {"implement"}, "note": {strings.Repeat("x", runtime.MaxFeedback+1)}, "csrf": {tok}}
	req, _ := http.NewRequest("POST", w.ts.URL+"/run/0/run-handoff/answer", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "the note holds at most") {
		t.Fatalf("%d\n%s", resp.StatusCode, body[:min(len(body), 400)])
	}
	if got := w.acts.list(); len(got) != 0 {
		t.Fatalf("the actions were called: %v", got)
	}
}
