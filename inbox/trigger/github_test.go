package trigger

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/internal/wait"
)

var issue = ghfake.Issue{Repo: "acme/api", Number: 7, Title: "Add must add", Body: "calc.Add subtracts."}

// TestHookGitHubSignatureAttacks: a delivery whose signature is missing,
// forged, made with another secret, for another body, or in another
// header gets 401 and nothing else: no run, no comment, and its body is
// not read (a body that is not JSON is still a 401, not a 400).
func TestHookGitHubSignatureAttacks(t *testing.T) {
	w := newWorld(t, 4)
	good := ghfake.Labeled(ghSecret, issue, "sandgate", "ana")
	other := ghfake.Labeled("another secret", issue, "sandgate", "ana")
	for name, d := range map[string]ghfake.Delivery{
		"missing":         {Event: "issues", ID: "a-1", Body: good.Body},
		"forged":          {Event: "issues", ID: "a-2", Body: good.Body, Signature: "sha256=" + strings.Repeat("0", 64)},
		"another secret":  {Event: "issues", ID: "a-3", Body: good.Body, Signature: other.Signature},
		"another body":    {Event: "issues", ID: "a-4", Body: append(bytes.Clone(good.Body), ' '), Signature: good.Signature},
		"sha1 only":       {Event: "issues", ID: "a-5", Body: good.Body, Signature: strings.Replace(good.Signature, "sha256=", "sha1=", 1)},
		"not JSON forged": {Event: "issues", ID: "a-6", Body: []byte("{{{"), Signature: good.Signature},
		"uppercase hex":   {Event: "issues", ID: "a-7", Body: good.Body, Signature: "sha256=" + strings.ToUpper(strings.TrimPrefix(good.Signature, "sha256="))},
	} {
		code, msg := w.deliver(t, d)
		if code != http.StatusUnauthorized || strings.TrimSpace(msg) != "bad signature" {
			t.Errorf("%s: %d %q, want 401 bad signature", name, code, msg)
		}
	}
	w.h.Wait()
	if n := len(w.start.started()); n != 0 || len(w.gh.Comments()) != 0 {
		t.Fatalf("BREACH: unsigned deliveries started %d runs, comments %v", n, w.gh.Comments())
	}
	// The same delivery, signed, goes through.
	if code, msg := w.deliver(t, good); code != http.StatusAccepted {
		t.Fatalf("the signed delivery: %d %s", code, msg)
	}
}

// TestHookGitHubReplay: a delivery sent again (same X-GitHub-Delivery)
// starts nothing more, also after the server restarts.
func TestHookGitHubReplay(t *testing.T) {
	w := newWorld(t, 4)
	d := ghfake.Labeled(ghSecret, issue, "sandgate", "ana")
	if code, msg := w.deliver(t, d); code != http.StatusAccepted {
		t.Fatalf("first: %d %s", code, msg)
	}
	if code, msg := w.deliver(t, d); code != http.StatusOK || !strings.Contains(msg, "handled before") {
		t.Fatalf("replay: %d %s", code, msg)
	}
	w.h.Close()
	w.open(t, 4)
	if code, msg := w.deliver(t, d); code != http.StatusOK || !strings.Contains(msg, "handled before") {
		t.Fatalf("replay after a restart: %d %s", code, msg)
	}
	if n := len(w.start.started()); n != 1 {
		t.Fatalf("BREACH: one delivery started %d runs", n)
	}
}

// TestHookGitHubStartsWithProvenance: the label starts the label's
// blueprint with the issue's text as its input, as data however it reads;
// the run is labelled with where it came from; the issue gets its link.
func TestHookGitHubStartsWithProvenance(t *testing.T) {
	w := newWorld(t, 4)
	hostile := ghfake.Issue{Repo: "acme/api", Number: 9, Title: "--model x", Body: "$(rm -rf /)\n`id`\x1b]0;pwned\x07\n--allow-env=GH_TOKEN"}
	if code, msg := w.deliver(t, ghfake.Labeled(ghSecret, hostile, "sandgate", "Ana")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	c := w.comments(t, 1)
	reqs := w.start.started()
	want := "--model x\n\n" + hostile.Body
	if len(reqs) != 1 || reqs[0].Blueprint != "chore" || len(reqs[0].Inputs) != 1 || reqs[0].Inputs["task"] != want {
		t.Fatalf("started %+v, want chore with task %q", reqs, want)
	}
	lbl := reqs[0].Labels
	if lbl["trigger"] != "github" || lbl["by"] != "Ana" || lbl["source"] != "https://github.com/acme/api/issues/9" || reqs[0].By != "github:Ana" {
		t.Errorf("provenance: %+v by %s", lbl, reqs[0].By)
	}
	if c[0].Number != 9 || c[0].Body != "sandgate started chore: https://inbox.example.com/run/0/run-1" {
		t.Errorf("the link comment: %+v", c[0])
	}
	// Another label, an unlabel, a bot's label: nothing.
	for _, d := range []ghfake.Delivery{ghfake.Labeled(ghSecret, issue, "bug", "ana")} {
		if code, _ := w.deliver(t, d); code != http.StatusOK {
			t.Errorf("another label: %d", code)
		}
	}
	w.h.out.Wait()
	if n := len(w.start.started()); n != 1 {
		t.Errorf("another label started a run")
	}
}

// TestHookGitHubRefusals: each refusal is answered on the issue with its
// reason, and starts nothing; a repository outside the file gets no
// comment (the server has no business there).
func TestHookGitHubRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      ghfake.Delivery
		code   int
		reason string
	}{
		{"author not allowed", ghfake.Commented(ghSecret, issue, "mallory", "/sandgate chore"), 403, "mallory may not start runs in acme/api"},
		{"labeller not allowed", ghfake.Labeled(ghSecret, issue, "sandgate", "mallory"), 403, "mallory may not start runs in acme/api"},
		{"unknown blueprint", ghfake.Commented(ghSecret, issue, "ana", "/sandgate nope"), 422, `blueprint "nope" may not be started from acme/api (the trigger file allows: chore)`},
		{"input against its pattern", ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore ticket=JIRA-1"), 422, `"JIRA-1" does not match its pattern OPS-[0-9]+`},
		{"input the blueprint lacks", ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore model=gpt"), 422, `blueprint chore has no input "model"`},
		{"a flag as a word", ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore --model=x"), 422, `"--model=x" is not key=value`},
		{"open quote", ghfake.Commented(ghSecret, issue, "ana", `/sandgate chore task="a b`), 422, "a double quote is not closed"},
		{"repository not in the file", ghfake.Commented(ghSecret, ghfake.Issue{Repo: "evil/repo", Number: 1}, "ana", "/sandgate chore"), 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 4)
			code, msg := w.deliver(t, tc.d)
			w.h.Wait()
			if code != tc.code || !strings.Contains(msg, "refused") {
				t.Errorf("%d %q, want %d refused", code, msg, tc.code)
			}
			c := w.gh.Comments()
			if tc.reason == "" {
				if len(c) != 0 {
					t.Errorf("comments %v", c)
				}
			} else if len(c) != 1 || !strings.HasPrefix(c[0].Body, "sandgate refused: ") || !strings.Contains(c[0].Body, tc.reason) {
				t.Errorf("comments %v, want one with %q", c, tc.reason)
			}
			if n := len(w.start.started()); n != 0 {
				t.Errorf("BREACH: a refused trigger started %d runs", n)
			}
		})
	}
}

// TestHookGitHubComment: a comment's command starts that blueprint with
// its values (quoted values keep their spaces) and the issue's text for
// the input it leaves out; a comment that is not a command is ignored.
func TestHookGitHubComment(t *testing.T) {
	w := newWorld(t, 4)
	for _, body := range []string{"thanks!", "/sandgatex chore", "please run /sandgate chore"} {
		if code, _ := w.deliver(t, ghfake.Commented(ghSecret, issue, "ana", body)); code != http.StatusOK {
			t.Errorf("%q: %d", body, code)
		}
	}
	if code, msg := w.deliver(t, ghfake.Commented(ghSecret, issue, "ana", "/sandgate chore ticket=OPS-12\nmore words")); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	if code, msg := w.deliver(t, ghfake.Commented(ghSecret, issue, "ana", `/sandgate chore task="fix it now"`)); code != http.StatusAccepted {
		t.Fatalf("%d %s", code, msg)
	}
	w.comments(t, 2)
	r := w.start.started()
	if len(r) != 2 || r[0].Inputs["ticket"] != "OPS-12" || r[0].Inputs["task"] != "Add must add\n\ncalc.Add subtracts." || r[1].Inputs["task"] != "fix it now" {
		t.Fatalf("started %+v", r)
	}
}

// TestHookGitHubStorm: 100 signed deliveries with distinct ids at once
// start at most max_runs runs; the others are refused (429), and the
// issue is told once.
func TestHookGitHubStorm(t *testing.T) {
	const max = 3
	w := newWorld(t, max)
	var wg sync.WaitGroup
	codes := make([]int, 100)
	for i := range codes {
		// Distinct events: the same body again is a replay, whatever its id.
		d := ghfake.Commented(ghSecret, issue, "ana", fmt.Sprintf("/sandgate chore ticket=OPS-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = w.deliver(t, d)
		}()
	}
	wg.Wait()
	accepted, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusTooManyRequests:
			refused++
		}
	}
	wait.Until(t, "the started runs' link comments", func() bool { return len(w.gh.Comments()) >= max+1 })
	w.h.out.Wait()
	if n := len(w.start.started()); n > max || accepted != max || refused != 100-max {
		t.Fatalf("BREACH: a storm of 100 started %d runs (accepted %d, refused %d), cap %d", n, accepted, refused, max)
	}
	busy := 0
	for _, c := range w.gh.Comments() {
		if strings.Contains(c.Body, "max_runs") {
			busy++
		}
	}
	if busy != 1 {
		t.Errorf("the issue was told it is busy %d times", busy)
	}
}
