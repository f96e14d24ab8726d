package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/runtime"
)

// actE2E prints its task and sleeps as long as its input says: a quick
// run to re-run, a long one to cancel.
const actE2E = `version: 1
name: act-e2e
inputs:
  task: {required: true, pattern: '[A-Za-z0-9 ]+'}
  secs: {default: "0", pattern: '[0-9]+'}
start: work
nodes:
  work:
    type: shell
    run: {argv: [sh, -c, 'echo working on "$1"; sleep "$2"', sh, "${{ inputs.task }}", "${{ inputs.secs }}"]}
    next: done
  done: {type: succeed}
`

// TestInboxActE2E drives the inbox's actions in Chromium on real
// sandboxed runs: re-running a finished run starts a new run with the
// same inputs that succeeds; a running node's output streams onto its
// page; cancelling it ends the run canceled, keeps what the node ran, its
// output and its real duration, and records who cancelled.
func TestInboxActE2E(t *testing.T) {
	w := newInboxWorld(t, "")
	b := browsertest.Start(t)
	nav := func(path string) {
		t.Helper()
		b.Do(t, chromedp.Navigate(w.ts.URL+path), chromedp.WaitReady(chromedp.CSS("main")))
	}
	nav("/?token=" + anaToken)
	bp := writeBlueprint(t, actE2E)
	t.Run("re-run", func(t *testing.T) {
		code, out, errs := runCLI("run", bp, "--repo", w.repo, "--runs-dir", w.runs, "--input", "task=Fix TestAdd quickly", "--label", "team=infra")
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
		}
		id := strings.TrimSuffix(strings.Fields(out)[1], ":")
		nav("/run/0/" + id)
		t.Logf("run page actions: %s", browsertest.Eval[string](t, b, `document.getElementById("actions").innerText`))
		b.Click(t, `a.act-rerun`)
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`button.confirm.act-rerun`)))
		b.Click(t, `button.confirm.act-rerun`)
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`#done, #error`)))
		if msg := browsertest.Eval[string](t, b, `(document.getElementById("error") || {innerText: ""}).innerText`); msg != "" {
			t.Fatalf("re-run refused: %s", msg)
		}
		again := strings.TrimPrefix(browsertest.Eval[string](t, b, `location.pathname`), "/run/0/")
		if again == id || strings.Contains(again, "/") {
			t.Fatalf("after re-run the browser is on %s", again)
		}
		wait.Until(t, "the re-run finished", func() bool {
			sum, err := runtime.Summarize(filepath.Join(w.runs, again))
			return err == nil && sum.Status != runtime.StatusRunning
		})
		sum, _ := runtime.Summarize(filepath.Join(w.runs, again))
		if sum.Status != runtime.StatusSucceeded || sum.Inputs["task"] != "Fix TestAdd quickly" || sum.Labels["team"] != "infra" {
			t.Fatalf("re-run ended %s with inputs %v, labels %v (log: %s)", sum.Status, sum.Inputs, sum.Labels, readLogs(filepath.Join(w.runs, again)))
		}
		for _, d := range []string{id, again} {
			if b, _ := os.ReadFile(filepath.Join(w.runs, d, "actions.jsonl")); !strings.Contains(string(b), `"by":"ana"`) {
				t.Errorf("%s's actions.jsonl does not name ana: %s", d, b)
			}
		}
	})
	t.Run("start from the form", func(t *testing.T) { startInBrowser(t, w, b, nav) })
	t.Run("retry a failed run", func(t *testing.T) { retryInBrowser(t, w, b, nav) })
	t.Run("cancel a running node", func(t *testing.T) {
		type result struct {
			code     int
			out, err string
		}
		done := make(chan result, 1)
		go func() {
			code, out, errs := runCLI("run", bp, "--repo", w.repo, "--runs-dir", w.runs, "--input", "task=wait", "--input", "secs=300")
			done <- result{code, out, errs}
		}()
		var dir string
		var failed *result
		wait.Until(t, "the slow run's node started", func() bool {
			select {
			case r := <-done:
				failed = &r
				return true
			default:
			}
			ents, _ := os.ReadDir(w.runs)
			for _, e := range ents {
				ev, _ := os.ReadFile(filepath.Join(w.runs, e.Name(), "events.jsonl"))
				if strings.Contains(string(ev), `"secs":"300"`) && strings.Contains(string(ev), `"node_started"`) {
					dir = filepath.Join(w.runs, e.Name())
					return true
				}
			}
			return false
		})
		if failed != nil {
			t.Fatalf("the slow run ended before it was canceled: exit %d\n%s\n%s", failed.code, failed.out, failed.err)
		}
		nav("/run/0/" + filepath.Base(dir))
		t.Logf("slow run page: %s", browsertest.Eval[string](t, b, `document.querySelector("p.status").innerText`))
		// The node's output streams onto the page while it runs: the box
		// sends it on while the command sleeps.
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`g.node[data-node="work"][data-state="running"]`)))
		untilOutputShows(t, b, dir)
		b.Click(t, `a.act-cancel`)
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`button.confirm.act-cancel`)))
		clicked := time.Now()
		b.Click(t, `button.confirm.act-cancel`)
		b.Do(t, chromedp.WaitReady(chromedp.CSS(`#run-status.s-canceled, #error`)))
		if msg := browsertest.Eval[string](t, b, `(document.getElementById("error") || {innerText: ""}).innerText`); msg != "" {
			t.Fatalf("cancel refused: %s", msg)
		}
		t.Logf("canceled %v after the confirmation was clicked", time.Since(clicked).Round(time.Millisecond))
		r := <-done
		sum, err := runtime.Summarize(dir)
		if err != nil || sum.Status != runtime.StatusCanceled || !strings.Contains(sum.Reason, "by ana") {
			t.Fatalf("run: %v %+v\n%s\n%s", err, sum, r.out, r.err)
		}
		cmds, _ := os.ReadFile(filepath.Join(dir, "commands.jsonl"))
		if !strings.Contains(string(cmds), `sleep \"$2\"`) {
			t.Errorf("commands.jsonl lost the canceled node's command: %s", cmds)
		}
		if out, _ := os.ReadFile(filepath.Join(dir, "nodes", "work", "1", "output.log")); string(out) != "working on wait\n" {
			t.Errorf("the canceled node's output.log: %q", out)
		}
		if got := browsertest.Eval[string](t, b, `document.querySelector("details.attempt.st-canceled summary").innerText`); strings.Contains(got, " 0 ms") {
			t.Errorf("the canceled attempt shows %q: not its real duration", got)
		}
		b.Screenshot(t, "inbox-canceled.png")
	})
}

// startInBrowser starts act-e2e (a --blueprints-dir blueprint) from its
// generated form, with a label, on the server's repository: the run
// succeeds with the typed task, and its journal names who started it.
func startInBrowser(t *testing.T, w *inboxWorld, b *browsertest.Browser, nav func(string)) {
	t.Chdir(w.repo) // the server starts runs on its own repository
	nav("/start/act-e2e")
	b.Type(t, `textarea[name="in.task"]`, "Fix TestAdd from the form")
	b.Type(t, `textarea[name="labels"]`, "team=infra")
	b.Click(t, `form.start button`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`button.confirm.act-start`)))
	b.Click(t, `button.confirm.act-start`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#run-status, #error`)))
	if msg := browsertest.Eval[string](t, b, `(document.getElementById("error") || {innerText: ""}).innerText`); msg != "" {
		t.Fatalf("start refused: %s", msg)
	}
	id := strings.TrimPrefix(browsertest.Eval[string](t, b, `location.pathname`), "/run/0/")
	dir := filepath.Join(w.runs, id)
	wait.Until(t, "the started run finished", func() bool {
		sum, err := runtime.Summarize(dir)
		return err == nil && sum.Status != runtime.StatusRunning
	})
	sum, _ := runtime.Summarize(dir)
	if sum.Status != runtime.StatusSucceeded || sum.Inputs["task"] != "Fix TestAdd from the form" || sum.Labels["team"] != "infra" {
		t.Fatalf("the started run: %s, inputs %v, labels %v (log: %s)", sum.Status, sum.Inputs, sum.Labels, readLogs(dir))
	}
	if acts, _ := os.ReadFile(filepath.Join(dir, "actions.jsonl")); !strings.Contains(string(acts), `"by":"ana","action":"started act-e2e"`) {
		t.Errorf("actions.jsonl: %s", acts)
	}
}

// retryE2E fails until calc.go adds.
const retryE2E = `version: 1
name: retry-e2e
start: check
nodes:
  check: {type: shell, run: "grep -q 'a + b' calc.go", on_pass: done, on_fail: bad}
  done: {type: succeed}
  bad: {type: fail}
`

// retryInBrowser: a run fails on the repository; once the repository is
// fixed, Retry on the failed run's page (a re-run: a failed run keeps no
// workspace) starts a new run that succeeds.
func retryInBrowser(t *testing.T, w *inboxWorld, b *browsertest.Browser, nav func(string)) {
	code, out, errs := runCLI("run", writeBlueprint(t, retryE2E), "--repo", w.repo, "--runs-dir", w.runs)
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	if sum, err := runtime.Summarize(filepath.Join(w.runs, id)); err != nil || sum.Status != runtime.StatusFailed {
		t.Fatalf("the first run: exit %d, %+v %v\n%s\n%s", code, sum, err, out, errs)
	}
	if err := gitfixture.Write(w.repo, map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}); err != nil {
		t.Fatal(err)
	}
	if err := gitfixture.Commit(w.repo, "ana", "fix Add"); err != nil {
		t.Fatal(err)
	}
	nav("/run/0/" + id)
	if why := browsertest.Eval[string](t, b, `document.querySelector("a.act-rerun").title`); !strings.Contains(why, "a failed run keeps no workspace, so a retry is a new run") {
		t.Errorf("the failed run's retry does not say what it does: %q", why)
	}
	b.Click(t, `a.act-rerun`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`button.confirm.act-rerun`)))
	b.Click(t, `button.confirm.act-rerun`)
	b.Do(t, chromedp.WaitReady(chromedp.CSS(`#done, #error`)))
	again := strings.TrimPrefix(browsertest.Eval[string](t, b, `location.pathname`), "/run/0/")
	if again == id {
		t.Fatalf("retry stayed on the failed run: %s", browsertest.Eval[string](t, b, `document.body.innerText`))
	}
	wait.Until(t, "the retry finished", func() bool {
		sum, err := runtime.Summarize(filepath.Join(w.runs, again))
		return err == nil && sum.Status != runtime.StatusRunning
	})
	if sum, _ := runtime.Summarize(filepath.Join(w.runs, again)); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("the retry ended %s (log: %s)", sum.Status, readLogs(filepath.Join(w.runs, again)))
	}
}

// untilOutputShows waits until the running work node's output is on the
// open page. Its bound is the node's own life, not the test's deadline:
// once the node has ended (its sleep is over) the output of a running node
// can never show, so the test fails at once with what the run wrote and
// what the page holds.
func untilOutputShows(t *testing.T, b *browsertest.Browser, dir string) {
	t.Helper()
	var ended bool
	wait.Until(t, "the running node's output shows, or the node ends", func() bool {
		if strings.Contains(browsertest.Eval[string](t, b, `(document.getElementById("log-work-1") || {textContent: ""}).textContent`), "working on wait") {
			return true
		}
		ev, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		ended = strings.Contains(string(ev), `"node_finished"`) || strings.Contains(string(ev), `"run_closed"`)
		return ended
	})
	if ended {
		out, _ := os.ReadFile(filepath.Join(dir, "nodes", "work", "1", "output.log"))
		ev, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
		t.Fatalf("the work node ended before its output showed on its page\noutput.log: %q\nevents.jsonl:\n%s\npage's #live:\n%s",
			out, ev, browsertest.Eval[string](t, b, `document.getElementById("live").outerHTML`))
	}
}
