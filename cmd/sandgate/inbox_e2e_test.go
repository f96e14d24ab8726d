package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/wait"

	"github.com/chromedp/chromedp"
	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
)

// inboxWorld is one repository, its runs and review queue, and `sandgate
// serve`'s inbox over them with the real actions.
const anaToken = "ana-0123456789abcdef"

type inboxWorld struct {
	repo, runs, reviews string
	acts                *serveActions
	ts                  *httptest.Server
}

// newInboxWorld serves the inbox as cmdServe does. Answers run this test
// binary as the CLI (TestMain), with model as their --model.
func newInboxWorld(t *testing.T, model string) *inboxWorld {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CLI", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A repository named like one, for the pictures of the pages.
	repo := filepath.Join(t.TempDir(), "calc")
	if err := os.Rename(gitRepo(t), repo); err != nil {
		t.Fatal(err)
	}
	w := &inboxWorld{repo: repo, runs: t.TempDir(), reviews: t.TempDir()}
	// The inbox can start act-e2e from a --blueprints-dir directory.
	bpDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(bpDir, "act-e2e.yaml"), []byte(actE2E), 0o644); err != nil {
		t.Fatal(err)
	}
	w.acts = &serveActions{exe: exe, answerArgs: (&runFlags{model: model}).answerArgs(),
		blueprints: blueprintSet{dirs: []string{bpDir}, shipped: blueprints.FS}}
	// Ana signs in with her named token: what she does is recorded under
	// her name, not the server's --by.
	cfg := serveConfig{runs: []string{w.runs}, reviews: []string{w.reviews}, by: "the-server", acts: w.acts,
		people: &inbox.People{Tokens: map[string]string{anaToken: "ana"}}}
	srv, err := cfg.server()
	if err != nil {
		t.Fatal(err)
	}
	srv.Index().MinRefresh = -1
	t.Cleanup(srv.Index().Close)
	w.ts = httptest.NewServer(srv)
	t.Cleanup(func() { browsertest.CloseServer(w.ts); w.acts.wait() })
	return w
}

// reviewedRun runs src (REMOTE, REVIEWS filled in) to its review and
// returns the queued entry.
func (w *inboxWorld) reviewedRun(t *testing.T, src, remote string) nodes.ReviewEntry {
	t.Helper()
	bp := writeBlueprint(t, strings.NewReplacer("REMOTE", remote, "REVIEWS", w.reviews).Replace(src))
	code, out, errs := runCLI("run", bp, "--repo", w.repo, "--runs-dir", w.runs)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	d, err := (&nodes.ReviewQueue{Dir: w.reviews}).Get(id)
	if err != nil {
		t.Fatalf("review entry of run %s: %v\n%s", id, err, out)
	}
	return d.Entry
}

// TestInboxBrowserE2E drives the inbox in Chromium over real sandboxed
// runs: answering a hand-off continues the run to success, approving
// lands the change on a bare remote's main, rejecting records the note.
func TestInboxBrowserE2E(t *testing.T) {
	fix := modelScript(t, `- tool_calls: [{function: {name: edit_file, arguments: {path: calc.go, old: "a - b", new: "a + b"}}}]
- tool_calls: [{function: {name: finish, arguments: {summary: fixed}}}]
`)
	w := newInboxWorld(t, fix)
	b := browsertest.Start(t)
	nav := func(path string) {
		t.Helper()
		b.Do(t, chromedp.Navigate(w.ts.URL+path), chromedp.WaitReady(chromedp.CSS("main")))
	}
	nav("/?token=" + anaToken)
	t.Run("answer a hand-off", func(t *testing.T) { answerInBrowser(t, w, b, nav) })
	t.Run("approve merges into main", func(t *testing.T) { approveInBrowser(t, w, b, nav) })
	t.Run("reject records the note", func(t *testing.T) { rejectInBrowser(t, w, b, nav) })
	handedOffRun(t, w.repo, w.runs, writeBlueprint(t, answerE2E)) // one waiting, for the picture
	nav("/")
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("#runs tr.run").length`); n != 4 {
		t.Errorf("the runs list shows %d runs, want 4", n)
	}
	b.Screenshot(t, "inbox-runs.png")
	if n := b.Dialogs.Load(); n != 0 {
		t.Errorf("%d JavaScript dialogs opened", n)
	}
}

func answerInBrowser(t *testing.T, w *inboxWorld, b *browsertest.Browser, nav func(string)) {
	dir := handedOffRun(t, w.repo, w.runs, writeBlueprint(t, answerE2E))
	nav("/handoffs")
	cli := browsertest.Eval[string](t, b, `document.querySelector("pre.answer-cli").innerText`)
	takeover := browsertest.Eval[string](t, b, `(document.querySelector("pre.takeover") || {innerText: ""}).innerText`)
	if !strings.Contains(cli, "sandgate answer "+dir+" --to implement --note") || !strings.Contains(takeover, "git -C "+w.repo) {
		t.Errorf("hand-off page: answer line %q, takeover %q", cli, takeover)
	}
	// The node is left as preselected: handoff.json's recommendation.
	b.Type(t, `form.answer textarea[name="note"]`, "Add must add: use a + b")
	b.Screenshot(t, "inbox-handoff.png")
	b.Click(t, `form.answer button[type="submit"]`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#run-status`)))
	if u := browsertest.Eval[string](t, b, `location.pathname`); u != "/run/0/"+filepath.Base(dir) {
		t.Fatalf("after answering the browser is on %s (%s)", u, browsertest.Eval[string](t, b, `document.body.innerText`))
	}
	// The answer is accepted and shown at once; the page then follows the
	// run without a reload.
	b.Do(t, chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	t.Logf("status when the page loaded: %s", browsertest.Eval[string](t, b, `document.getElementById("run-status").textContent`))
	if got := browsertest.Eval[string](t, b, `document.getElementById("answers").innerText`); !strings.Contains(got, "answered by ana") || !strings.Contains(got, "Add must add: use a + b") {
		t.Errorf("the run page does not show the answer: %q", got)
	}
	status := ""
	wait.For(t, func() bool {
		status = browsertest.Eval[string](t, b, `document.getElementById("run-status").textContent`)
		return status == "succeeded"
	})
	if status != "succeeded" || !browsertest.Eval[bool](t, b, `window.notReloaded === true`) {
		t.Fatalf("run page status %q (want succeeded without a reload); answer log:\n%s", status, readLogs(dir))
	}
	if n, running := browsertest.Eval[int](t, b, `document.querySelectorAll("details.attempt").length`),
		browsertest.Eval[int](t, b, `document.querySelectorAll("details.attempt.st-running").length`); n != 6 || running != 0 {
		t.Errorf("the live page lists %d attempts, %d running; want all 6 finished", n, running)
	}
	w.acts.wait()
	// The note reached the agent: the preselected node was the right one.
	ts, _ := filepath.Glob(filepath.Join(dir, "nodes", "implement", "*", "transcript.jsonl"))
	heard := false
	for _, p := range ts {
		b, _ := os.ReadFile(p)
		heard = heard || strings.Contains(string(b), "Add must add: use a + b")
	}
	if !heard {
		t.Errorf("no transcript of implement holds the note (%v)", ts)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "answer-1.log")); err != nil || !strings.Contains(string(b), "status: succeeded") {
		t.Errorf("answer-1.log: %v\n%s", err, b)
	}
	if z := zombies(t); len(z) > 0 {
		t.Errorf("answer children left as zombies: %v", z)
	}
	b.Do(t, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("details.attempt.st-fail").forEach(d => d.open = true)`))
	b.Screenshot(t, "inbox-run.png")
}

func readLogs(dir string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "answer-*.log"))
	var out string
	for _, p := range m {
		b, _ := os.ReadFile(p)
		out += p + ":\n" + string(b)
	}
	return out
}

// zombies lists this process's children that have exited and stay
// unreaped. A child seen between its exit and its Wait (another part of
// the harness reaping it a moment later) is a zombie for that moment
// only, so a zombie counts once it has stayed for five seconds; a leaked
// one stays forever.
func zombies(t *testing.T) []int {
	t.Helper()
	z := zombiesNow()
	for deadline := time.Now().Add(5 * time.Second); len(z) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		now := zombiesNow()
		z = slices.DeleteFunc(z, func(pid int) bool { return !slices.Contains(now, pid) })
	}
	return z
}

// zombiesNow lists this process's children that have exited and are not
// reaped yet.
func zombiesNow() []int {
	m, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 2 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, pid)
		}
	}
	return out
}

const e2eReviewBlueprint = `version: 1
name: NAME
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: BRANCH, message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, delete_on_reject: true, next: review}
  review: {type: review, dir: REVIEWS, title: "Add adds", on_approve: {merge_into: main}, next: done}
  done: {type: succeed}
  stuck: {type: handoff}
`

// bareClone is a bare clone of repo, in a temporary directory, for a run
// to push to.
func bareClone(t *testing.T, repo string) string {
	t.Helper()
	return bareRemote(t, repo, filepath.Join(t.TempDir(), "remote.git"))
}

// bareRemote makes dir a bare clone of repo and returns it.
func bareRemote(t *testing.T, repo, dir string) string {
	t.Helper()
	if err := gitfixture.Remote(repo, dir, ""); err != nil {
		t.Fatal(err)
	}
	return dir
}

func gitRev(remote, ref string) string {
	out, _ := exec.Command("git", "--git-dir="+remote, "rev-parse", "--verify", "-q", ref).Output()
	return strings.TrimSpace(string(out))
}

func decideInBrowser(t *testing.T, b *browsertest.Browser, verdict, note string) string {
	b.Type(t, `form.decide textarea[name="note"]`, note)
	b.Click(t, `form.decide button.`+verdict)
	if verdict == "approve" { // approving asks once more
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`button.confirm.approve`)))
		b.Click(t, `button.confirm.approve`)
	}
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#decided`)))
	return browsertest.Eval[string](t, b, `document.getElementById("decided").innerText`)
}

func approveInBrowser(t *testing.T, w *inboxWorld, b *browsertest.Browser, nav func(string)) {
	remote := bareClone(t, w.repo)
	before := gitRev(remote, "refs/heads/main")
	e := w.reviewedRun(t, strings.NewReplacer("NAME", "approve-e2e", "BRANCH", "fix/add").Replace(e2eReviewBlueprint), remote)
	nav("/review/0/" + e.ID)
	b.Screenshot(t, "inbox-review.png")
	shown := decideInBrowser(t, b, "approve", "ship it")
	if main := gitRev(remote, "refs/heads/main"); main != e.Commit || main == before {
		t.Fatalf("after approving in the browser the remote's main is %s, want the reviewed commit %s", main, e.Commit)
	}
	if !strings.Contains(shown, "approved by ana") || !strings.Contains(shown, "ship it") || !strings.Contains(shown, e.Commit) {
		t.Errorf("the review page shows %q", shown)
	}
	d, err := (&nodes.ReviewQueue{Dir: w.reviews}).Get(e.ID)
	if err != nil || d.Entry.Status != "approved" || d.Entry.DecidedBy != "ana" || d.Entry.Note != "ship it" {
		t.Fatalf("entry after approve: %+v %v", d, err)
	}
	// A second decision is refused, and the refusal is shown as a page.
	nav("/review/0/" + e.ID)
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("form.decide").length`); n != 0 {
		t.Errorf("a decided entry still offers the decision form")
	}
}

func rejectInBrowser(t *testing.T, w *inboxWorld, b *browsertest.Browser, nav func(string)) {
	remote := bareClone(t, w.repo)
	e := w.reviewedRun(t, strings.NewReplacer("NAME", "reject-e2e", "BRANCH", "fix/other").Replace(e2eReviewBlueprint), remote)
	if gitRev(remote, "refs/heads/fix/other") == "" {
		t.Fatal("the run did not push fix/other")
	}
	nav("/review/0/" + e.ID)
	note := `wrong approach: <b>see</b> issue 7`
	shown := decideInBrowser(t, b, "reject", note)
	if !strings.Contains(shown, "rejected by ana") || !strings.Contains(shown, note) {
		t.Errorf("the review page shows %q, want the rejection and its note as text", shown)
	}
	raw, err := os.ReadFile(filepath.Join(w.reviews, e.ID, "entry.json"))
	if err != nil || !strings.Contains(string(raw), `"status": "rejected"`) && !strings.Contains(string(raw), `"status":"rejected"`) {
		t.Fatalf("entry.json after reject: %v\n%s", err, raw)
	}
	d, _ := (&nodes.ReviewQueue{Dir: w.reviews}).Get(e.ID)
	if d == nil || d.Entry.Note != note || d.Entry.DecidedBy != "ana" {
		t.Fatalf("entry after reject: %+v", d)
	}
	if gitRev(remote, "refs/heads/fix/other") != "" {
		t.Errorf("rejecting left the pushed branch (delete_on_reject) on the remote")
	}
	if main := gitRev(remote, "refs/heads/main"); main == e.Commit {
		t.Errorf("rejecting landed the change")
	}
	b.Screenshot(t, "inbox-rejected.png")
}
