package review_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/nodes/internal/review"
	"github.com/sandgate/sandgate/runtime"
)

const ghWaitFlow = `version: 1
name: ghwait
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go && echo '// round' >> calc.go", next: test}
  test: {type: test, run: go test -json ./..., on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, branch: fix/add, message: "fix: Add adds", next: review}
  review: {type: review, queue: github, repo: acme/calc, base_url: API, token_env: SANDGATE_TEST_GH_TOKEN, wait: 1h, on_pass: done, on_fail: {to: fix, max: 1}}
  done: {type: succeed}
  stuck: {type: handoff}
`

// ghReviews plays the reviewers of pull request 7 for a run: an approval
// of a commit the run never reviewed is there from the start; once the
// node polled twice, bob requests changes on the first commit; on the
// run's second commit carol approves. Its answers are GitHub's documented
// review payloads.
type ghReviews struct {
	mu     sync.Mutex
	runs   string
	polls  int
	first  string
	review []string
}

func (g *ghReviews) current() string {
	m, _ := filepath.Glob(filepath.Join(g.runs, "*", "commit.json"))
	if len(m) != 1 {
		return ""
	}
	var c struct{ Commit string }
	b, _ := os.ReadFile(m[0])
	_ = json.Unmarshal(b, &c)
	return c.Commit
}

func ghReviewJSON(id int, user, state, commit, body string) string {
	return `{"id":` + itoa(id) + `,"node_id":"PRR_x","user":{"login":"` + user + `","id":1,"type":"User"},"body":"` + body + `","state":"` + state +
		`","html_url":"https://github.com/acme/calc/pull/7#pullrequestreview-` + itoa(id) + `","pull_request_url":"https://api.github.com/repos/acme/calc/pulls/7","commit_id":"` + commit + `","submitted_at":"2025-01-01T00:00:00Z","author_association":"MEMBER"}`
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func (g *ghReviews) answer() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.polls++
	head := g.current()
	if g.first == "" {
		g.first = head
		g.review = []string{ghReviewJSON(90, "dave", "APPROVED", nodetest.GHHead, "LGTM (an older push)")}
	}
	if head == g.first && g.polls == 3 {
		g.review = append(g.review, ghReviewJSON(100, "carol", "COMMENTED", head, "looking"),
			ghReviewJSON(101, "bob", "CHANGES_REQUESTED", head, "Please name the sum and test negatives."))
	}
	if head != g.first && len(g.review) == 3 {
		g.review = append(g.review, ghReviewJSON(102, "carol", "APPROVED", head, "Thanks"))
	}
	return "[" + strings.Join(g.review, ",") + "]"
}

const ghComments = `[
 {"id":1,"pull_request_review_id":101,"path":"calc.go","line":4,"original_line":4,"side":"RIGHT","commit_id":"x","original_commit_id":"x","user":{"login":"bob"},"body":"Name the sum."},
 {"id":2,"pull_request_review_id":101,"path":"calc.go","line":null,"original_line":3,"side":"RIGHT","commit_id":"x","original_commit_id":"x","user":{"login":"bob"},"body":"This line is gone."},
 {"id":3,"pull_request_review_id":101,"path":"calc_test.go","line":7,"original_line":7,"side":"RIGHT","commit_id":"x","original_commit_id":"x","user":{"login":"bob"},"body":"Test negatives too."},
 {"id":4,"pull_request_review_id":100,"path":"README","line":1,"original_line":1,"side":"RIGHT","commit_id":"x","original_commit_id":"x","user":{"login":"carol"},"body":"unrelated remark"}
]`

// TestReviewWaitGitHub: a run opens pull request 7 and waits. The first
// reviews poll is rate limited (429 Retry-After: 30) and the node pauses
// that long; an approval of another commit does not pass it; bob's
// changes requested with three line comments fail it with path:line
// feedback for the retry; the retry finds the same pull request (no second
// one), updates it, ignores bob's now stale review, and carol's approval
// of the new commit passes the run.
func TestReviewWaitGitHub(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	defer review.FastReviewPolling(func(d time.Duration) { mu.Lock(); slept = append(slept, d); mu.Unlock() })()
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	api := nodetest.NewGitHubDouble(t)
	h := nodetest.NewHarnessWith(t, nodetest.SeedRepo(t), nodes.Options{AllowEndpoints: []string{api.URL}})
	rv := &ghReviews{runs: h.RT.RunsDir}
	api.Reviews, api.Comments, api.Limited = rv.answer, ghComments, 1
	sum := h.Run(t, strings.Replace(ghWaitFlow, "API", api.URL, 1), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	count := map[string]int{}
	for _, r := range api.Seen() {
		count[r.Method+" "+r.Path]++
		if r.Method == "GET" && r.Path == "/repos/acme/calc/pulls" && r.Query != "base=main&head=acme%3Afix%2Fadd&state=open" {
			t.Errorf("pull request lookup query %q", r.Query)
		}
	}
	if count["POST /repos/acme/calc/pulls"] != 1 || count["GET /repos/acme/calc/pulls"] != 1 || count["PATCH /repos/acme/calc/pulls/7"] != 1 {
		t.Fatalf("want one pull request opened, then found and updated on the retry; the double saw %v", count)
	}
	mu.Lock()
	if len(slept) == 0 || slept[0] != 30*time.Second {
		t.Errorf("the rate limit's Retry-After was not honored: pauses %v", slept)
	}
	mu.Unlock()
	fin := events(t, sum.Dir, "review", runtime.EvNodeFinished)
	if len(fin) != 2 || fin[0].Outputs["decision"] != "changes_requested" || fin[0].Outputs["comments"] != float64(3) ||
		fin[0].Outputs["id"] != "7" || fin[0].Outputs["url"] != "https://github.com/acme/calc/pull/7" || fin[1].Outputs["decision"] != "approved" {
		t.Fatalf("review verdicts: %+v", fin)
	}
	fb := events(t, sum.Dir, "fix", runtime.EvNodeStarted)[1].Feedback
	for _, want := range []string{"@bob: Please name the sum and test negatives.", "calc.go:4: Name the sum.", "calc.go:3: This line is gone.", "calc_test.go:7: Test negatives too."} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
	if strings.Contains(fb, "unrelated") || strings.Contains(fb, "LGTM") {
		t.Errorf("feedback carries comments of other reviews:\n%s", fb)
	}
}

// TestReviewPullRequestAlreadyExists: a creation GitHub refuses with 422
// "already exists" (a retried activity) finds that pull request and
// records its real number and URL.
func TestReviewPullRequestAlreadyExists(t *testing.T) {
	t.Setenv("SANDGATE_TEST_GH_TOKEN", "gh-secret")
	api := nodetest.NewGitHubDouble(t)
	api.Exists = true
	reviews := t.TempDir()
	h := nodetest.NewHarnessWith(t, nodetest.SeedRepo(t), nodes.Options{AllowEndpoints: []string{api.URL}})
	sum := h.Run(t, strings.NewReplacer("API", api.URL, "REVIEWS", reviews).Replace(draftFlow), nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	fin := events(t, sum.Dir, "review", runtime.EvNodeFinished)
	if len(fin) != 1 || fin[0].Outputs["id"] != "7" || fin[0].Outputs["url"] != "https://github.com/acme/calc/pull/7" {
		t.Fatalf("review outputs: %+v", fin)
	}
	d, err := (&nodes.ReviewQueue{Dir: reviews}).Get(filepath.Base(sum.Dir))
	if err != nil || d.Entry.PullRequest == nil || d.Entry.PullRequest.Number != 7 || d.Entry.PullRequest.NodeID != nodetest.GHNodeID {
		t.Fatalf("entry: %v %+v", err, d)
	}
	var seen []string
	for _, r := range api.Seen() {
		seen = append(seen, r.Method+" "+r.Path)
	}
	if strings.Join(seen, ", ") != "POST /repos/acme/calc/pulls, GET /repos/acme/calc/pulls, PATCH /repos/acme/calc/pulls/7" {
		t.Fatalf("the double saw %v", seen)
	}
}
