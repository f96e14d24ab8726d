package ci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/pause"
	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/runtime"
)

// The GitHub provider polls the check runs and the combined status of the
// pushed commit until every required check has finished, backing off
// exponentially and waiting out GitHub's rate limits, within the node's
// budget. Results for any other commit are ignored.

var (
	stampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z ?`)
	ansiRE  = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	// jobRE finds an Actions job id in a check run's details_url
	// (…/actions/runs/<run>/job/<job>).
	jobRE = regexp.MustCompile(`/job/(\d+)`)
)

// ciShownChecks is how many failing checks get a log tail.
const ciShownChecks = 8

// errCITimedOut ends a wait whose budget ran out.
var errCITimedOut = errors.New("the wait for CI ran out of time")

// ciClock is the poller's time; tests use a fake one.
type ciClock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error { return pause.For(ctx, d) }

// ghCheck is one check run or commit status, by name.
type ghCheck struct {
	Name string
	// State is pending, success, failure or cancelled.
	State      string
	Conclusion string
	URL        string
	JobID      int64
	Summary    string
	id         int64
	// app is the GitHub App that reported a check run; 0 for a commit
	// status.
	app int64
}

// github waits for GitHub's verdict on the pushed commit.
func (c *CI) github(ctx context.Context, in *runtime.Input, push *gitremote.PushedBranch, budget time.Duration) (*ciVerdict, error) {
	repo, err := c.field(in, "repo", c.cfg.Repo)
	if err != nil {
		return nil, err
	}
	if repo == "" {
		if repo = repoFromRemote(push.Remote); repo == "" {
			return nil, fmt.Errorf("cannot tell owner/name from the remote %s: set repo", gitremote.RedactURL(push.Remote))
		}
	}
	if !validRepo(repo) {
		return nil, fmt.Errorf("repo %q: want owner/name", repo)
	}
	base, err := c.field(in, "base_url", c.cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	// The loader checked a literal base_url; this checks the rendered one
	// and holds for blueprints that did not come through the loader,
	// before any connection.
	if err := github.CheckURL(base, c.allowed); err != nil {
		return nil, fmt.Errorf("base_url: %w", err)
	}
	token, lease, err := c.token(ctx, in, base, repo)
	if err != nil {
		return nil, err
	}
	defer lease.Done(in)
	deadline := c.clock.Now().Add(budget)
	g := &ghAPI{repo: repo, clock: c.clock, deadline: deadline, client: &github.Client{Base: strings.TrimRight(base, "/"),
		Allowed: c.allowed, Token: token, Deadline: deadline, MaxBody: 16 << 20}}
	p := &ghPoll{api: g, sha: push.Commit, branch: strings.TrimPrefix(push.Ref, "refs/heads/"), checks: c.cfg.Checks,
		poll: c.cfg.Poll, logLines: c.cfg.LogLines, redact: func(s string) string { return lease.Redact(in.Redactor.String(s)) }}
	v, err := p.wait(ctx)
	return v, lease.Err(err)
}

// token gives the wait's token: the operator's (token_env), or minted for
// repo with read access to checks and statuses (credentials), whose lease
// the caller closes.
func (c *CI) token(ctx context.Context, in *runtime.Input, base, repo string) (func() (string, error), *credential.Lease, error) {
	if c.app != nil {
		lease, err := credential.NewLease(ctx, in, c.app.WithBase(base), c.allowed, credential.CI, repo)
		if err != nil {
			return nil, nil, err
		}
		return lease.Token, lease, nil
	}
	tok := os.Getenv(c.cfg.TokenEnv)
	if tok == "" {
		return nil, nil, fmt.Errorf("provider github: %s is not set in the harness environment", c.cfg.TokenEnv)
	}
	return func() (string, error) { return tok, nil }, nil, nil
}

// repoFromRemote is gitremote.RepoOf.
var repoFromRemote = gitremote.RepoOf

// ghPoll is one wait for one commit.
type ghPoll struct {
	api      *ghAPI
	sha      string
	branch   string
	checks   []string
	poll     time.Duration
	logLines int
	// fallback: no required checks are known, so every check reported
	// counts, and the set must stay the same over two polls before it
	// is trusted to be complete.
	fallback bool
	note     string
	lastErr  error
	// redact removes the harness's credentials from a log before it is
	// cut, so a cut never leaves part of a credential standing.
	redact func(string) string
	// apps binds required checks to the app that must report them, as
	// the branch protection does: a check run of the same name from
	// another app, or a commit status (which anyone with write access,
	// a workflow in the pushed change included, can set), does not count.
	apps map[string]int64
}

// wait polls until the required checks finish or the budget runs out.
func (p *ghPoll) wait(ctx context.Context) (*ciVerdict, error) {
	required, err := p.required(ctx)
	if errors.Is(err, errCITimedOut) {
		return p.timedOut(nil, nil), nil
	}
	if err != nil {
		return nil, err
	}
	interval, prev := p.poll, ""
	var checks map[string]*ghCheck // the latest answer
	for {
		now, err := p.current(ctx)
		switch {
		case errors.Is(err, errCITimedOut):
			return p.timedOut(checks, required), nil
		case errors.Is(err, errTransient):
			p.lastErr = err
		case err != nil:
			return nil, err
		default:
			checks = now
			names := required
			if p.fallback {
				names = sortedNames(checks)
			}
			failing, pending := judge(names, checks)
			sig := strings.Join(names, "\x00")
			settled := !p.fallback || (len(names) > 0 && sig == prev)
			prev = sig
			if len(pending) == 0 && settled {
				return p.verdict(ctx, failing, checks, names), nil
			}
		}
		if err := p.api.sleep(ctx, interval); err != nil {
			if errors.Is(err, errCITimedOut) {
				return p.timedOut(checks, required), nil
			}
			return nil, err
		}
		interval = min(2*interval, 8*p.poll)
	}
}

// required is the checks that must pass: the configured ones, else the
// branch protection's, else none (every check reported counts).
func (p *ghPoll) required(ctx context.Context) ([]string, error) {
	if len(p.checks) > 0 {
		return p.checks, nil
	}
	names, apps, status, err := p.api.requiredChecks(ctx, p.branch)
	if err != nil && !errors.Is(err, errTransient) {
		return nil, err
	}
	p.apps = apps
	if len(names) > 0 {
		return names, nil
	}
	p.fallback = true
	why := "the branch has no required status checks"
	if status != 200 {
		why = fmt.Sprintf("its required status checks could not be read (HTTP %d)", status)
		if err != nil {
			why = fmt.Sprintf("its required status checks could not be read (%v)", err)
		}
	}
	p.note = fmt.Sprintf("Note: every check reported for the commit counts: no checks are configured and for branch %s %s.", p.branch, why)
	return nil, nil
}

// current reads the commit's check runs and combined status, merged by
// name: a name failing in either is failing, pending in either pending.
func (p *ghPoll) current(ctx context.Context) (map[string]*ghCheck, error) {
	runs, err := p.api.checkRuns(ctx, p.sha)
	if err != nil {
		return nil, err
	}
	statuses, err := p.api.statuses(ctx, p.sha)
	if err != nil {
		return nil, err
	}
	out := map[string]*ghCheck{}
	rank := map[string]int{ciSuccess: 0, "pending": 1, ciCancelled: 2, ciFailure: 3}
	for _, c := range append(runs, statuses...) {
		if app, pinned := p.apps[c.Name]; pinned && c.app != app {
			continue
		}
		if prev, ok := out[c.Name]; !ok || rank[c.State] > rank[prev.State] {
			out[c.Name] = c
		}
	}
	return out, nil
}

// judge splits names into failing checks and pending names (not yet
// reported, or not finished).
func judge(names []string, checks map[string]*ghCheck) (failing []*ghCheck, pending []string) {
	for _, n := range names {
		c, ok := checks[n]
		switch {
		case !ok || c.State == "pending":
			pending = append(pending, n)
		case c.State != ciSuccess:
			failing = append(failing, c)
		}
	}
	return failing, pending
}

// verdict is the finished wait's result, with log tails of the failures.
func (p *ghPoll) verdict(ctx context.Context, failing []*ghCheck, checks map[string]*ghCheck, required []string) *ciVerdict {
	v := &ciVerdict{State: ciSuccess}
	for _, c := range failing {
		v.Failed = append(v.Failed, c.Name)
		if v.URL == "" {
			v.URL = c.URL
		}
		if c.State != ciCancelled {
			v.State = ciFailure
		} else if v.State == ciSuccess {
			v.State = ciCancelled
		}
	}
	// Log tails for the first few failures; a long list shares the bytes
	// too thinly to help, and the names are in the summary line.
	shown := failing[:min(len(failing), ciShownChecks)]
	parts := make([]string, 0, len(shown))
	for _, c := range shown {
		parts = append(parts, p.explain(ctx, c, ciFeedbackBytes/max(1, len(shown))))
	}
	v.Body = sections(parts, ciFeedbackBytes)
	if more := len(failing) - len(shown); more > 0 {
		v.Body += fmt.Sprintf("(%d more failing checks without their logs here.)\n", more)
	}
	v.Body += p.notes(checks, required)
	return v
}

// timedOut reports a wait that ran out of time: what failed so far and
// what was still pending.
func (p *ghPoll) timedOut(checks map[string]*ghCheck, required []string) *ciVerdict {
	names := required
	if p.fallback || len(names) == 0 {
		names = sortedNames(checks)
	}
	failing, pending := judge(names, checks)
	v := &ciVerdict{State: ciTimedOut}
	for _, c := range failing {
		v.Failed = append(v.Failed, c.Name)
	}
	var b strings.Builder
	b.WriteString("CI did not finish within the node's timeout.\n")
	if len(pending) > 0 {
		fmt.Fprintf(&b, "Still pending: %s.\n", strings.Join(pending, ", "))
	}
	if len(names) == 0 {
		b.WriteString("No check was reported for the commit.\n")
	}
	if p.lastErr != nil {
		fmt.Fprintf(&b, "Last error from GitHub: %v\n", p.lastErr)
	}
	v.Body = b.String() + p.notes(checks, required)
	return v
}

// notes names optional checks that failed (ignored) and the fallback.
func (p *ghPoll) notes(checks map[string]*ghCheck, required []string) string {
	var out []string
	if !p.fallback {
		req := map[string]bool{}
		for _, n := range required {
			req[n] = true
		}
		var optional []string
		for _, n := range sortedNames(checks) {
			if !req[n] && checks[n].State != ciSuccess && checks[n].State != "pending" {
				optional = append(optional, n)
			}
		}
		if len(optional) > 0 {
			out = append(out, "Optional checks that did not pass (ignored): "+strings.Join(optional, ", ")+".")
		}
	}
	if p.note != "" {
		out = append(out, p.note)
	}
	return strings.Join(out, "\n")
}

// explain is one failing check's feedback: its job log's tail, else the
// check's own summary, within budget bytes.
func (p *ghPoll) explain(ctx context.Context, c *ghCheck, budget int) string {
	head := fmt.Sprintf("--- %s: %s", c.Name, c.Conclusion)
	if c.URL != "" {
		head += " (" + c.URL + ")"
	}
	body := c.Summary
	if c.JobID != 0 {
		log, err := p.api.jobLog(ctx, c.JobID)
		switch {
		case err != nil:
			body = strings.TrimSpace(body + fmt.Sprintf("\n(the job's log could not be read: %v)", err))
		case strings.TrimSpace(log) != "":
			body = log
		}
	}
	room := max(budget-len(head)-1, 256)
	return head + "\n" + logTail(p.redact(feedback.PlainText(body)), p.logLines, room)
}

func sortedNames(checks map[string]*ghCheck) []string {
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
