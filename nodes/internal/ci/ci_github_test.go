package ci_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

const ciToken = "ghs_ci-double-token-5be1"

// ciLoop fixes the bug, commits and pushes, and waits for CI; a CI
// failure goes back to fix once. Each fix attempt appends a line to
// attempts.txt, so the second push is a new commit, on a branch of its
// own (each commit's parent is the base, so it would not fast-forward).
const ciLoop = `version: 1
name: ci
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go && echo attempt >> attempts.txt", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: "fix/add-${{ attempts.commit }}", message: "fix: Add adds", next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: github, repo: octo/calc, base_url: API, token_env: SANDGATE_TEST_CI_TOKEN, poll: 20ms, CIKEYS on_pass: done, on_fail: {to: fix, max: 1}}
  done: {type: succeed}
  stuck: {type: handoff}
`

// ciRun runs src against a bare remote and the double.
func ciRun(t *testing.T, gh *ghfake.Server, src string) (*runtime.Summary, []runtime.Event, string) {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CI_TOKEN", ciToken)
	repo := nodetest.SeedRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	src = strings.NewReplacer("REMOTE", bare, "API", gh.API.URL).Replace(src)
	h := nodetest.NewHarnessWith(t, repo, nodes.Options{AllowEndpoints: []string{gh.API.URL}})
	bp, err := blueprint.Parse("ci.yaml", []byte(src), blueprint.WithTypes(h.RT.Registry), blueprint.WithAllowEndpoints(gh.API.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := h.RT.Run(ctx, bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var ci []runtime.Event
	for _, ev := range nodetest.ReadEvents(t, sum.Dir) {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "ci" {
			ci = append(ci, ev)
		}
	}
	return sum, ci, bare
}

// actionsLog is a long Actions log: timestamps on every line, the
// failure at the end.
func actionsLog() string {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "2024-05-04T01:15:%02d.1234567Z noise line %d: downloading module cache\n", i%60, i)
	}
	b.WriteString("2024-05-04T01:20:50.0000000Z \x1b[31m--- FAIL: TestAddNegative (0.00s)\x1b[0m\n")
	b.WriteString("2024-05-04T01:20:50.0000001Z     calc_test.go:9: Add(-2, -3) = 1, want -5\n")
	b.WriteString("2024-05-04T01:20:51.0000000Z ##[error]Process completed with exit code 1.\n")
	return b.String()
}

// TestCIGitHubLoop runs the whole loop against the double: the first
// pushed commit's build goes queued → in_progress → failure, with an
// optional lint check failing too and a rate-limited poll; the feedback
// takes the agent back to fix with the failing job's log tail; the second
// commit's build passes while stale answers for the first commit (a check
// run and a combined status) are still served, and must be ignored.
func TestCIGitHubLoop(t *testing.T) {
	gh := ghfake.New(ciToken, "octo/calc")
	defer gh.Close()
	var first string
	gh.Set(func(s *ghfake.Server) {
		s.Required = []string{"build", "ci/vet"}
		s.JobLogs[1001] = actionsLog()
		s.Limits = []ghfake.Limit{{Path: "/check-runs", Status: 429, Headers: map[string]string{"Retry-After": "1"}}}
		s.Script = func(sha string, poll int) ghfake.Answer {
			if first == "" {
				first = sha
			}
			vet := []ghfake.Status{{Context: "ci/vet", State: "success", Description: "vet passed"}}
			lint := ghfake.Run{ID: 50, Name: "lint", Status: "completed", Conclusion: "failure", Summary: "3 style nits"}
			if sha == first {
				build := ghfake.Run{ID: 1001, Name: "build", Status: []string{"queued", "in_progress", "completed"}[min(poll, 3)-1], Conclusion: "failure", JobID: 1001}
				return ghfake.Answer{Runs: []ghfake.Run{build, lint}, Statuses: vet}
			}
			// The first commit's failed build, listed again with a higher
			// id, and its failed status: both stale for this commit.
			stale := ghfake.Run{ID: 3000, Name: "build", HeadSHA: first, Status: "completed", Conclusion: "failure", JobID: 1001}
			build := ghfake.Run{ID: 2002, Name: "build", Status: []string{"queued", "completed"}[min(poll, 2)-1], Conclusion: "success", JobID: 2002}
			if poll == 1 {
				return ghfake.Answer{Runs: []ghfake.Run{stale, build, lint}, StatusSHA: first, Statuses: []ghfake.Status{{Context: "ci/vet", State: "failure"}}}
			}
			return ghfake.Answer{Runs: []ghfake.Run{stale, build, lint}, Statuses: vet}
		}
	})
	sum, ci, bare := ciRun(t, gh, strings.Replace(ciLoop, "CIKEYS", "", 1))
	if sum.Status != runtime.StatusSucceeded || len(ci) != 2 {
		t.Fatalf("run %s %q with %d ci attempts", sum.Status, sum.Reason, len(ci))
	}
	fail, pass := ci[0], ci[1]
	t.Logf("feedback (%d bytes):\n%s", len(fail.Feedback), fail.Feedback)
	if fail.Outcome != runtime.OutcomeFail || fail.Outputs["state"] != "failure" || fmt.Sprint(fail.Outputs["failed"]) != "[build]" {
		t.Fatalf("first ci: %s %v", fail.Outcome, fail.Outputs)
	}
	for _, want := range []string{"--- FAIL: TestAddNegative", "Add(-2, -3) = 1, want -5", "exit code 1", "Failing: build", "(ignored): lint"} {
		if !strings.Contains(fail.Feedback, want) {
			t.Errorf("feedback lacks %q", want)
		}
	}
	// Bounded tails: not the log's start, no timestamps or escapes, 80
	// lines at most, 8 KB and a header.
	if strings.Contains(fail.Feedback, "noise line 1:") || strings.Contains(fail.Feedback, "2024-05-04T") || strings.Contains(fail.Feedback, "\x1b[") ||
		strings.Count(fail.Feedback, "noise line") > 80 || len(fail.Feedback) > 9<<10 {
		t.Errorf("the feedback is not a bounded, clean tail")
	}
	if pass.Outcome != runtime.OutcomePass || pass.Outputs["state"] != "success" {
		t.Fatalf("second ci: %s %v %q", pass.Outcome, pass.Outputs, pass.Feedback)
	}
	second, _ := pass.Outputs["commit"].(string)
	pushed := nodetest.Run(t, bare, "git", "for-each-ref", "--format=%(objectname)", "refs/heads/")
	if fail.Outputs["commit"] != first || first == second || !strings.Contains(pushed, first) || !strings.Contains(pushed, second) {
		t.Fatalf("judged %v then %v; the remote has %s", first, second, pushed)
	}
	checkCIRequests(t, gh, first, second)
}

// checkCIRequests: every API request carried the token, the first
// commit was never polled once the second was pushed, and the log host
// never saw the token.
func checkCIRequests(t *testing.T, gh *ghfake.Server, first, second string) {
	t.Helper()
	reqs := gh.Requests()
	seenSecond := false
	for _, r := range reqs {
		if !r.Auth {
			t.Errorf("%s without the token", r.Path)
		}
		seenSecond = seenSecond || r.SHA == second
		if seenSecond && r.SHA == first {
			t.Errorf("polled the older commit after the new push: %s", r.Path)
		}
		if r.SHA != "" && r.SHA != first && r.SHA != second {
			t.Errorf("polled a commit nobody pushed: %s", r.Path)
		}
	}
	auth := gh.LogAuth()
	if len(auth) == 0 {
		t.Fatal("the job log was never downloaded")
	}
	if slices.ContainsFunc(auth, func(a string) bool { return a != "" }) {
		t.Fatalf("the log host received an Authorization header: %q", auth)
	}
}

// TestCIGitHubTimesOut: CI never starts; the node's timeout ends the wait
// with state timed_out, naming what was pending.
func TestCIGitHubTimesOut(t *testing.T) {
	gh := ghfake.New(ciToken, "octo/calc")
	defer gh.Close()
	gh.Set(func(s *ghfake.Server) {
		s.Required = []string{"build"}
		s.Script = func(string, int) ghfake.Answer {
			return ghfake.Answer{Runs: []ghfake.Run{{ID: 1, Name: "build", Status: "queued"}}}
		}
	})
	src := strings.NewReplacer("CIKEYS", "timeout: 2s,", "on_fail: {to: fix, max: 1}", "on_fail: stuck").Replace(ciLoop)
	sum, ci, _ := ciRun(t, gh, src)
	if len(ci) != 1 || ci[0].Outcome != runtime.OutcomeFail || ci[0].Outputs["state"] != "timed_out" || sum.Status == runtime.StatusSucceeded {
		t.Fatalf("run %s; ci %+v", sum.Status, ci)
	}
	if !strings.Contains(ci[0].Feedback, "Still pending: build") {
		t.Fatalf("feedback: %q", ci[0].Feedback)
	}
}

// TestCIRenderedKeysChecked: repo and base_url may name inputs, which the
// loader cannot check; the node checks the rendered values before any
// connection. A repo that climbs out of /repos/ and an API base the
// operator did not allow each stop the run with no request made, and the
// token goes nowhere.
func TestCIRenderedKeysChecked(t *testing.T) {
	gh := ghfake.New(ciToken, "octo/calc")
	defer gh.Close()
	t.Setenv("SANDGATE_TEST_CI_TOKEN", ciToken)
	const src = `version: 1
name: ci-rendered
inputs: {repo: {required: true}, api: {required: true}}
start: ci
nodes:
  ci: {type: ci, provider: github, commit: base, branch: main, repo: "${{ inputs.repo }}", base_url: "${{ inputs.api }}", token_env: SANDGATE_TEST_CI_TOKEN, on_pass: done, on_fail: done}
  done: {type: succeed}
`
	cases := []struct{ name, repo, api, want string }{
		{"repo with dot segments", "../../users", gh.API.URL, `repo "../../users": want owner/name`},
		{"repo with a query", "octo/calc?x=1", gh.API.URL, "want owner/name"},
		{"base_url not allowed", "octo/calc", "http://127.0.0.1:1/api", "--allow-endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := nodetest.NewHarnessWith(t, nodetest.SeedRepo(t), nodes.Options{AllowEndpoints: []string{gh.API.URL}})
			sum := h.Run(t, src, map[string]any{"repo": c.repo, "api": c.api})
			if sum.Status == runtime.StatusSucceeded || !strings.Contains(sum.Reason, c.want) {
				t.Fatalf("run %s %q, want %q", sum.Status, sum.Reason, c.want)
			}
			if n := len(gh.Requests()); n != 0 {
				t.Fatalf("%d requests reached the API", n)
			}
		})
	}
}
