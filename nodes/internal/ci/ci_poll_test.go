package ci

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/runtime"
)

// fakeClock advances only when the poller sleeps, and remembers how long
// it was asked to sleep.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// literalIn is the input of a ci node whose keys name no inputs.
var literalIn = &runtime.Input{Spec: &blueprint.Node{}}

const pollSHA = "0123456789abcdef0123456789abcdef01234567"

// pollCI waits on the double with a fake clock and the node's defaults
// (poll 10s, 80 log lines).
func pollCI(t *testing.T, gh *ghfake.Server, budget time.Duration, checks ...string) (*ciVerdict, *fakeClock, error) {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CI_TOKEN", "tok")
	clock := &fakeClock{now: time.Now()}
	c := &CI{clock: clock, allowed: []string{gh.API.URL}, cfg: CIConfig{Provider: "github", Checks: checks, LogLines: 80,
		Poll: 10 * time.Second, BaseURL: gh.API.URL, TokenEnv: "SANDGATE_TEST_CI_TOKEN"}}
	push := &gitremote.PushedBranch{Remote: "https://github.com/octo/calc.git", Ref: "refs/heads/fix/add", Commit: pollSHA}
	v, err := c.github(context.Background(), literalIn, push, budget)
	return v, clock, err
}

// TestCIWaitsOutRateLimits: a primary rate limit (403, remaining 0, reset
// in 30s), a secondary one (429 with Retry-After) and a 403 with
// Retry-After; the poller sleeps at least as long as each says before it
// asks again, and then reads the verdict.
func TestCIWaitsOutRateLimits(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	reset := time.Now().Add(30 * time.Second).Unix()
	gh.Set(func(s *ghfake.Server) {
		s.Required = []string{"build"}
		s.Limits = []ghfake.Limit{
			{Path: "/protection/", Status: 403, Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}},
			{Path: "/check-runs", Status: 429, Headers: map[string]string{"Retry-After": "7"}},
			{Path: "/status", Status: 403, Headers: map[string]string{"Retry-After": "3"}},
		}
		s.Script = func(string, int) ghfake.Answer {
			return ghfake.Answer{Runs: []ghfake.Run{{ID: 1, Name: "build", Status: "completed", Conclusion: "success"}}}
		}
	})
	v, clock, err := pollCI(t, gh, time.Hour)
	if err != nil || v.State != ciSuccess {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	s := clock.sleeps
	if len(s) != 3 || s[0] < 30*time.Second || s[0] > 32*time.Second || s[1] != 7*time.Second || s[2] != 3*time.Second {
		t.Fatalf("sleeps %v, want ≥30s until the reset, then 7s, then 3s", s)
	}
	var paths []string
	for _, r := range gh.Requests() {
		paths = append(paths, r.Path[strings.LastIndex(r.Path, "/"):])
	}
	if want := "[/required_status_checks /required_status_checks /check-runs /check-runs /status /status]"; fmt.Sprint(paths) != want {
		t.Fatalf("requests %v, want each limited one asked again once", paths)
	}
}

// TestCIFallsBackToEveryCheck: the branch is not protected and no checks
// are configured, so every check reported counts; one that shows up only
// on the second poll must still be waited for, and its failure counts.
func TestCIFallsBackToEveryCheck(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	gh.Set(func(s *ghfake.Server) {
		s.Script = func(_ string, poll int) ghfake.Answer {
			runs := []ghfake.Run{{ID: 1, Name: "build", Status: "completed", Conclusion: "success"}}
			if poll >= 2 {
				e2e := ghfake.Run{ID: 2, Name: "e2e", Status: "in_progress", Summary: "TestCheckout timed out"}
				if poll >= 4 {
					e2e.Status, e2e.Conclusion = "completed", "timed_out"
				}
				runs = append(runs, e2e)
			}
			return ghfake.Answer{Runs: runs}
		}
	})
	v, clock, err := pollCI(t, gh, time.Hour)
	if err != nil || v.State != ciFailure || fmt.Sprint(v.Failed) != "[e2e]" {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	for _, want := range []string{"every check reported for the commit counts", "HTTP 404", "e2e: timed_out", "TestCheckout timed out"} {
		if !strings.Contains(v.Body, want) {
			t.Errorf("feedback lacks %q:\n%s", want, v.Body)
		}
	}
	// Four polls, backing off 10s, 20s, 40s: the first one's set (build
	// alone, all done) did not last to the second poll, so it did not
	// count as complete.
	if want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}; !slices.Equal(clock.sleeps, want) {
		t.Fatalf("sleeps %v, want %v", clock.sleeps, want)
	}
}

// TestCITimesOutAndBacksOff: CI never starts. The poller backs off to 8
// times the poll interval, stops at the budget and reports timed_out with
// what was pending; the total sleep never passes the budget.
func TestCITimesOutAndBacksOff(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	gh.Set(func(s *ghfake.Server) {
		s.Script = func(string, int) ghfake.Answer { return ghfake.Answer{} }
	})
	v, clock, err := pollCI(t, gh, 10*time.Minute, "build", "ci/vet")
	if err != nil || v.State != ciTimedOut || !strings.Contains(v.Body, "Still pending: build, ci/vet") {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	var total time.Duration
	for _, d := range clock.sleeps {
		total += d
		if d > 80*time.Second {
			t.Fatalf("slept %s, more than 8 × poll", d)
		}
	}
	if total != 10*time.Minute || clock.sleeps[4] != 80*time.Second {
		t.Fatalf("sleeps %v (total %s), want backoff to 80s ending at the budget", clock.sleeps, total)
	}
}

// TestCIStopsWhenCanceled: a canceled run ends the wait with the
// context's error, not a verdict.
func TestCIStopsWhenCanceled(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	gh.Set(func(s *ghfake.Server) { s.Script = func(string, int) ghfake.Answer { return ghfake.Answer{} } })
	t.Setenv("SANDGATE_TEST_CI_TOKEN", "tok")
	c := &CI{clock: realClock{}, allowed: []string{gh.API.URL}, cfg: CIConfig{Provider: "github", Checks: []string{"build"},
		Poll: time.Hour, BaseURL: gh.API.URL, TokenEnv: "SANDGATE_TEST_CI_TOKEN", Repo: "octo/calc"}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.github(ctx, literalIn, &gitremote.PushedBranch{Ref: "refs/heads/x", Commit: pollSHA}, time.Hour)
		done <- err
	}()
	for len(gh.Requests()) < 2 { // it polled once and sleeps for an hour
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestCIRefusesUnallowedBaseURL: the token goes nowhere the operator did
// not allow, checked before any connection.
func TestCIRefusesUnallowedBaseURL(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	t.Setenv("SANDGATE_TEST_CI_TOKEN", "tok")
	c := &CI{clock: realClock{}, cfg: CIConfig{Provider: "github", Poll: time.Second, BaseURL: gh.API.URL, TokenEnv: "SANDGATE_TEST_CI_TOKEN", Repo: "octo/calc"}}
	_, err := c.github(context.Background(), literalIn, &gitremote.PushedBranch{Ref: "refs/heads/x", Commit: pollSHA}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "--allow-endpoint") || len(gh.Requests()) != 0 {
		t.Fatalf("err %v after %d requests", err, len(gh.Requests()))
	}
}

func TestRepoFromRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"https://github.com/octo/calc.git":         "octo/calc",
		"https://ghe.example.com/org/team/calc":    "team/calc",
		"git@github.com:octo/calc.git":             "octo/calc",
		"https://x-access-token:s@github.com/o/r/": "o/r",
		"/srv/git/calc.git":                        "",
		"https://github.com/calc":                  "",
		"ssh://git@ghe.example.com:2222/octo/calc": "octo/calc",
	} {
		if got := repoFromRemote(remote); got != want {
			t.Errorf("repoFromRemote(%q) = %q, want %q", remote, got, want)
		}
	}
}

func TestLogTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "2024-05-04T01:15:00.1234567Z \x1b[1mline %d\x1b[0m\r\n", i)
	}
	got := logTail(b.String(), 80, 8<<10)
	if !strings.HasPrefix(got, "…\nline 121\n") || !strings.HasSuffix(got, "line 200") || strings.Count(got, "\n") != 80 {
		t.Fatalf("tail:\n%q", got)
	}
	if got := logTail(strings.Repeat("x", 100)+"\n"+strings.Repeat("y", 50), 80, 60); strings.Contains(got, "x") || len(got) > 60+4 {
		t.Fatalf("byte-bounded tail: %q", got)
	}
}

// TestCIFeedbackStaysBounded: thirty failing checks, each with a long
// summary: the feedback names them all and stays within 8 KB of tails.
func TestCIFeedbackStaysBounded(t *testing.T) {
	gh := ghfake.New("tok", "octo/calc")
	defer gh.Close()
	var names []string
	var runs []ghfake.Run
	for i := range 30 {
		n := fmt.Sprintf("shard-%02d", i)
		names = append(names, n)
		runs = append(runs, ghfake.Run{ID: int64(i + 1), Name: n, Status: "completed", Conclusion: "failure", Summary: strings.Repeat("é failure detail\n", 200)})
	}
	gh.Set(func(s *ghfake.Server) {
		s.Script = func(string, int) ghfake.Answer { return ghfake.Answer{Runs: runs} }
	})
	v, _, err := pollCI(t, gh, time.Hour, names...)
	if err != nil || v.State != ciFailure || len(v.Failed) != 30 {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	if len(v.Body) > ciFeedbackBytes+1024 || !strings.Contains(v.Body, "22 more failing checks") {
		t.Fatalf("feedback of %d bytes:\n%s", len(v.Body), v.Body)
	}
}
