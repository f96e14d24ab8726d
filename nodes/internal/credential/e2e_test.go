package credential_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// appFlow fixes the bug, pushes with a token minted for the push, opens
// the pull request with one minted for the review, then runs AFTER in the
// box. BEFORE runs in the box before the push. Either failing hands the
// run off: a shell node's next is taken whatever its outcome, so an
// attack run there must go by on_fail to be able to fail the run.
const appFlow = `version: 1
name: app-token
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: before}
  before: {type: shell, run: "BEFORE", on_pass: test, on_fail: stuck}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: push}
  push:
    type: git_push
    remote: GIT/acme/REPO.git
    credentials: {github_app: {app_id_env: SANDGATE_TEST_APP_ID, key_file: KEY, installation_id: 77, base_url: API}}
    next: review
  review:
    type: review
    queue: github
    repo: acme/calc
    base_url: API
    credentials: {github_app: {app_id_env: SANDGATE_TEST_APP_ID, key_file: KEY, installation_id: 77}}
    next: after
  after:
    type: shell
    run: |
      AFTER
    on_pass: done
    on_fail: stuck
  done: {type: succeed}
  stuck: {type: handoff}
`

// scan is an attack from inside the box after the run used its tokens:
// it looks for anything shaped like an installation token in its
// environment, every process's environment and command line it can see,
// the files of the workspace and /tmp, and every file of home written
// since SINCE (the test's start, before any token existed: a file older
// than that cannot hold one). Home holds the host's Go build and module
// caches, tens of GB: grepping all of them took minutes and grew with
// the caches. A control token it plants itself in /tmp, and another in
// the build cache's copy, must be found, or the scan is blind.
const scan = `ctl=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ctl2=BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB
      printf 'gh%s_%s\n' s "$ctl" > /tmp/control
      printf 'gh%s_%s\n' s "$ctl2" > "$HOME/.cache/go-build/control"
      touch -d @SINCE /tmp/since
      pat='gh[s]_[A-Za-z0-9]{36}'
      found=$( { env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'; } | grep -Eao "$pat"; grep -rEaoh "$pat" . /tmp 2>/dev/null; find "$HOME" -type f -newer /tmp/since -print0 2>/dev/null | xargs -0r grep -Eaoh "$pat" 2>/dev/null )
      echo "$found" | grep -q "$ctl" || { echo "the scan is blind"; exit 2; }
      echo "$found" | grep -q "$ctl2" || { echo "the scan of home is blind"; exit 2; }
      leak=$(echo "$found" | grep -v -e "$ctl" -e "$ctl2" | sort -u)
      [ -z "$leak" ] || { echo "LEAK: $leak"; exit 1; }`

// attackFailed is the run's reason with what the AFTER step printed:
// an attack that failed the run says why in its output.
func attackFailed(t *testing.T, sum *runtime.Summary) string {
	out := ""
	for _, e := range nodetest.ReadEvents(t, sum.Dir) {
		if e.Type == runtime.EvNodeFinished && e.Node == "after" {
			out = fmt.Sprint(e.Outputs["output"])
		}
	}
	return fmt.Sprintf("run %s: %s\nafter printed: %s", sum.Status, sum.Reason, out)
}

// sinceNow fills in SINCE of scan or reach: a second before now, so
// every file written from now on is newer.
func sinceNow(attack string) string {
	return strings.ReplaceAll(attack, "SINCE", strconv.FormatInt(time.Now().Unix()-1, 10))
}

// appRun is an app installed on acme/calc and acme/docs, a git server
// that takes what GitHub would take from its tokens, and the flow with
// the given replacements.
type appRun struct {
	gh   *ghfake.Server
	git  *nodetest.GitServer
	root string
	key  string // the app's private key file
	h    *nodetest.Harness
	src  string
}

func newAppRun(t *testing.T, hold func(*http.Request), repl ...string) *appRun {
	return newAppRunVia(t, hold, nil, repl...)
}

// newAppRunVia is newAppRun with the GitHub API behind front (when not
// nil): a server in front of the double, at the URL it returns.
func newAppRunVia(t *testing.T, hold func(*http.Request), front func(gh *ghfake.Server) string, repl ...string) *appRun {
	repo := nodetest.SeedRepo(t)
	gh, cfg, _ := newApp(t)
	a := &appRun{gh: gh, key: cfg.KeyFile}
	api := gh.API.URL
	if front != nil {
		api = front(gh)
	}
	a.git, a.root = nodetest.SmartHTTPWith(t, repo, nodetest.GitServerOptions{Name: "acme/calc.git", Hold: hold,
		Auth: func(pass string, write bool) int {
			return gh.TokenStatus(pass, "acme/calc", "contents", map[bool]string{true: "write", false: "read"}[write])
		}})
	a.h = nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{a.git.URL, api}})
	// The test's replacements first: for the same placeholder the
	// replacer takes the first pair.
	r := append(repl, "GIT", a.git.URL, "API", api, "KEY", cfg.KeyFile, "REPO", "calc", "BEFORE", "true", "AFTER", "true")
	a.src = strings.NewReplacer(r...).Replace(appFlow)
	return a
}

// mustBeDead wants every token the double minted refused now.
func (a *appRun) mustBeDead(t *testing.T) []string {
	t.Helper()
	var toks []string
	for _, m := range a.gh.Minted() {
		toks = append(toks, m.Token)
		if got := a.gh.TokenStatus(m.Token, "", "", ""); got != http.StatusUnauthorized {
			t.Errorf("a token for %v (%v) answers %d after the run, want 401", m.Repos, m.Permissions, got)
		}
	}
	return toks
}

// mustNotHold wants no file under dir to hold any of toks.
func mustNotHold(t *testing.T, dir string, toks []string) {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		n++
		for _, tok := range toks {
			if nodetest.FileHolds(p, tok) || nodetest.FileHolds(p, tok[4:]) {
				t.Errorf("BREACH: %s holds a minted token", p)
			}
		}
		return nil
	})
	if n == 0 {
		t.Fatalf("no file under %s", dir)
	}
}

// TestAppTokensPushAndOpenPullRequest: a run pushes and opens its pull
// request with tokens minted per node, each for acme/calc and its one
// permission, and revoked once used: GitHub answers 401 for both after
// the run. No file of the run holds them, and a scan from inside the box
// finds none.
func TestAppTokensPushAndOpenPullRequest(t *testing.T) {
	a := newAppRun(t, nil, "AFTER", sinceNow(scan))
	sum := a.h.Run(t, a.src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatal(attackFailed(t, sum))
	}
	if log := nodetest.Run(t, filepath.Join(a.root, "acme", "calc.git"), "git", "log", "--format=%s", "fix/add"); log != "fix: Add adds\ncalc with a bug" {
		t.Fatalf("pushed branch: %q", log)
	}
	if p := a.gh.Pulls(); len(p) != 1 || p[0].Repo != "acme/calc" || p[0].Head != "fix/add" {
		t.Fatalf("pull requests: %+v", p)
	}
	minted, perms := a.gh.Minted(), map[string]bool{}
	for _, m := range minted { // minted in the same second: in either order
		for k, v := range m.Permissions {
			perms[k+":"+v] = len(m.Permissions) == 1 && strings.Join(m.Repos, ",") == "acme/calc"
		}
	}
	if len(minted) != 2 || len(perms) != 2 || !perms["contents:write"] || !perms["pull_requests:write"] {
		t.Fatalf("minted %+v", minted)
	}
	toks := a.mustBeDead(t)
	push := minted[0].Token
	if minted[1].Permissions["contents"] == "write" {
		push = minted[1].Token
	}
	if seen := strings.Join(a.git.Seen(), ","); !strings.Contains(seen, push) {
		t.Fatal("the git server never saw the push's token")
	}
	ledger, _ := os.ReadFile(filepath.Join(sum.Dir, credential.LedgerFile))
	if strings.Count(string(ledger), `"event":"minted"`) != 2 || strings.Count(string(ledger), `"event":"revoked"`) != 2 {
		t.Fatalf("ledger:\n%s", ledger)
	}
	mustNotHold(t, sum.Dir, toks)
}

// TestAppTokenForAnotherRepository: a push to a repository the
// installation does not cover gets no token (GitHub answers 422), and the
// run fails saying so, before git sends anything.
func TestAppTokenForAnotherRepository(t *testing.T) {
	a := newAppRun(t, nil, "REPO", "other")
	sum := a.h.Run(t, a.src, nil)
	want := "github_app installation 77: mint a token for acme/other (contents: write): GitHub answered 422 Unprocessable Entity: There is at least one repository that does not exist or is not accessible to the parent installation."
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, want) {
		t.Fatalf("run %s: %s\nwant %s", sum.Status, sum.Reason, want)
	}
	if len(a.gh.Minted()) != 0 || len(a.git.Seen()) != 0 {
		t.Fatalf("minted %d tokens, the git server saw %d requests", len(a.gh.Minted()), len(a.git.Seen()))
	}
}

// TestAppTokenEchoedByTheRemote: a remote that refuses the push and
// prints the token it was given back in its refusal. The run fails with
// the remote's words, the token struck from them, and no file of the run
// holds it.
func TestAppTokenEchoedByTheRemote(t *testing.T) {
	var a *appRun
	echo := func(r *http.Request) {
		_, pass, _ := r.BasicAuth()
		hook := filepath.Join(a.root, "acme", "calc.git", "hooks", "pre-receive")
		_ = os.WriteFile(hook, []byte("#!/bin/sh\necho \"refused for "+pass+"\" >&2\nexit 1\n"), 0o755)
	}
	a = newAppRun(t, echo)
	sum := a.h.Run(t, a.src, nil)
	toks := a.mustBeDead(t)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "refused for ") || len(toks) != 1 || strings.Contains(sum.Reason, toks[0]) {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	mustNotHold(t, sum.Dir, toks)
}

// TestAppTokenRevokedOnCancel pulls the plug mid-push: the run is
// canceled while the git server holds the pack. Afterwards the token
// answers 401, the processes the run started (its box, git) are gone, and
// nothing reached the remote or GitHub.
func TestAppTokenRevokedOnCancel(t *testing.T) {
	holding, release := make(chan struct{}, 8), make(chan struct{})
	hold := func(r *http.Request) {
		holding <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release: // the test ended: let the server close
		}
	}
	a := newAppRun(t, hold)
	t.Cleanup(func() { close(release) }) // runs before the servers close
	done := a.h.RunAsync(t, a.src)
	select {
	case <-holding:
	case sum := <-done:
		t.Fatalf("the run ended before its push: %s %s", sum.Status, sum.Reason)
	}
	if len(a.gh.Minted()) != 1 || a.gh.TokenStatus(a.gh.Minted()[0].Token, "acme/calc", "contents", "write") != http.StatusOK {
		t.Fatal("mid-push the push's token is not live")
	}
	if len(children()) == 0 {
		t.Fatal("mid-push the run has no process (box, git) to stop")
	}
	dirs, _ := filepath.Glob(filepath.Join(a.h.RT.RunsDir, "*", "events.jsonl"))
	if len(dirs) != 1 {
		t.Fatalf("run directories: %v", dirs)
	}
	if err := runtime.RequestCancel(filepath.Dir(dirs[0]), "test pulls the plug"); err != nil {
		t.Fatal(err)
	}
	sum := <-done
	seen := len(a.git.Seen())
	if sum.Status != runtime.StatusCanceled {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	toks := a.mustBeDead(t)
	// The init the box pool started ahead for a next box is the
	// harness's, not the run's: it goes with the pool.
	sandbox.ReleaseSpares()
	for i := 0; i < 100 && len(children()) > 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if left := children(); len(left) > 0 {
		t.Fatalf("processes outlived the cancel: %q", left)
	}
	time.Sleep(500 * time.Millisecond) // anything still scheduled would send now
	if out := nodetest.Run(t, filepath.Join(a.root, "acme", "calc.git"), "git", "branch", "--list", "fix/add"); out != "" {
		t.Fatalf("the canceled push landed: %q", out)
	}
	if len(a.gh.Pulls()) != 0 || len(a.git.Seen()) != seen || len(a.gh.Minted()) != 1 {
		t.Fatalf("sent after the cancel: %d pulls, %d git requests (then %d), %d tokens", len(a.gh.Pulls()), len(a.git.Seen()), seen, len(a.gh.Minted()))
	}
	mustNotHold(t, sum.Dir, toks)
}

// children are the command lines of this process's live children: the
// run's box and git.
func children() []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, ...
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}
