package review

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
	"github.com/sandgate/sandgate/runtime"
)

// ghReview is the part of GitHub's pull request review payload the node
// reads.
type ghReview struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
	Body  string `json:"body"`
	// CommitID is the commit the review was made on.
	CommitID string `json:"commit_id"`
	// Association is the reviewer's relation to the repository (OWNER,
	// MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …).
	Association string `json:"author_association"`
	User        struct {
		Login string `json:"login"`
	} `json:"user"`
}

// ghComment is a pull request review comment: a remark on a line.
type ghComment struct {
	ReviewID     int64  `json:"pull_request_review_id"`
	Path         string `json:"path"`
	Line         *int   `json:"line"`
	OriginalLine *int   `json:"original_line"`
	Body         string `json:"body"`
}

// ghWaitTransient is a failed poll worth trying again later (a network
// error, GitHub's 5xx) rather than ending the wait.
type ghWaitTransient struct{ err error }

func (e ghWaitTransient) Error() string { return e.err.Error() }

// awaitGitHub polls the pull request's reviews until a reviewer approves
// or requests changes on the reviewed commit, or the wait runs out. It
// polls less and less often (reviewPolling) and never before GitHub's
// rate limit resets; reviews of older commits are stale and ignored, so
// an approval always approves the commit the gates verified.
func (r *Review) awaitGitHub(ctx context.Context, h *handed) (*runtime.Result, error) {
	gh := h.gh
	interval := reviewPolling.ghMin
	for {
		res, pause, err := r.pollReviews(ctx, gh, h)
		if _, transient := err.(ghWaitTransient); err != nil && !transient {
			return nil, err
		}
		if res != nil {
			return res, nil
		}
		left := time.Until(h.until)
		if left <= 0 {
			return waitExpired(h, r.wait), nil
		}
		if err := reviewPolling.sleep(ctx, min(left, max(interval, pause))); err != nil {
			return nil, err
		}
		interval = min(interval*3/2, reviewPolling.ghMax)
	}
}

// pollReviews asks GitHub once; a nil result means no decision yet, and
// pause is how long a rate limit asks to wait.
func (r *Review) pollReviews(ctx context.Context, gh *github.Client, h *handed) (*runtime.Result, time.Duration, error) {
	var reviews []ghReview
	if pause, err := ghList(ctx, gh, fmt.Sprintf("/repos/%s/pulls/%d/reviews", r.repo, h.pr.Number), &reviews); pause > 0 || err != nil {
		return nil, pause, err
	}
	changes, approvedBy := reviewDecision(reviews, h.commit)
	if len(changes) == 0 && approvedBy == "" {
		return nil, 0, nil
	}
	if len(changes) == 0 {
		return decided(h, DecisionApproved, 0, "approved on GitHub by "+approvedBy, ""), 0, nil
	}
	var comments []ghComment
	if pause, err := ghList(ctx, gh, fmt.Sprintf("/repos/%s/pulls/%d/comments", r.repo, h.pr.Number), &comments); pause > 0 || err != nil {
		return nil, pause, err
	}
	fb, n := changesFeedback(h.pr, changes, comments, h.clean)
	return decided(h, DecisionChangesRequested, n, fmt.Sprintf("changes requested on GitHub by %s", changes[0].User.Login), fb), 0, nil
}

// reviewDecision reads the reviews of commit: those requesting changes,
// and who approved. Reviews come in chronological order: the last on the
// reviewed commit stands for each reviewer. Only the repository's owner,
// members and collaborators decide: on a public repository anyone can
// leave a review, and a stranger's approval must not pass the change nor
// their text steer the agent.
func reviewDecision(reviews []ghReview, commit string) (changes []ghReview, approvedBy string) {
	latest := map[string]ghReview{}
	var order []string
	for _, rv := range reviews {
		if rv.CommitID != commit || !reviewerAssociations[rv.Association] ||
			(rv.State != "APPROVED" && rv.State != "CHANGES_REQUESTED" && rv.State != "DISMISSED") {
			continue
		}
		if _, seen := latest[rv.User.Login]; !seen {
			order = append(order, rv.User.Login)
		}
		latest[rv.User.Login] = rv
	}
	for _, login := range order {
		switch rv := latest[login]; rv.State {
		case "CHANGES_REQUESTED":
			changes = append(changes, rv)
		case "APPROVED":
			approvedBy = cmp.Or(approvedBy, login)
		}
	}
	return changes, approvedBy
}

// reviewerAssociations are the author_association values of people with
// a say over the repository.
var reviewerAssociations = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// changesFeedback is what the agent reads: each reviewer's summary, then
// their line comments as path:line: text, bounded in count and size; n
// counts every comment of the requesting reviews. Reviewers' text goes
// through clean before it is cut.
func changesFeedback(pr *reviewqueue.PullRequest, changes []ghReview, comments []ghComment, clean func(string) string) (string, int) {
	var b strings.Builder
	fmt.Fprintf(&b, "Changes requested on pull request #%d (%s):\n", pr.Number, pr.URL)
	ids := map[int64]bool{}
	for _, rv := range changes {
		ids[rv.ID] = true
		if body := strings.TrimSpace(rv.Body); body != "" {
			fmt.Fprintf(&b, "@%s: %s\n", clean(rv.User.Login), clean(body))
		}
	}
	n, shown := 0, 0
	for _, c := range comments {
		if !ids[c.ReviewID] {
			continue
		}
		n++
		if shown >= maxReviewComments || b.Len() >= maxReviewFeedbackBytes {
			continue
		}
		shown++
		where := clean(c.Path)
		if line := lineOf(c.Line, c.OriginalLine); line > 0 {
			where += ":" + strconv.Itoa(line)
		}
		fmt.Fprintf(&b, "%s: %s\n", where, clean(strings.TrimSpace(c.Body)))
	}
	out := bound(b.String())
	if n > shown {
		out += fmt.Sprintf("[%d more review comments left out; read them on the pull request]\n", n-shown)
	}
	return out, n
}

// lineOf is the comment's line, or its original line when the line is
// gone from the newest diff (GitHub sends null).
func lineOf(line, orig *int) int {
	if line != nil {
		return *line
	}
	if orig != nil {
		return *orig
	}
	return 0
}

// ghList reads every page (100 items each, up to 10 pages) of a GitHub
// list into out. A rate-limited answer returns the pause GitHub asks for;
// a network error or a 5xx is transient.
func ghList[T any](ctx context.Context, gh *github.Client, path string, out *[]T) (time.Duration, error) {
	*out = nil
	for page := 1; page <= 10; page++ {
		r, err := gh.Do(ctx, http.MethodGet, fmt.Sprintf("%s?per_page=100&page=%d", path, page), nil)
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, ghWaitTransient{fmt.Errorf("GET %s: %w", path, err)}
		}
		if pause, ok := github.RateLimited(r.Status, r.Header, r.Body, time.Now()); ok {
			return pause, nil
		}
		var items []T
		switch {
		case r.Status >= 500:
			return 0, ghWaitTransient{fmt.Errorf("GET %s: %d %s", path, r.Status, http.StatusText(r.Status))}
		case r.Status != http.StatusOK || json.Unmarshal(r.Body, &items) != nil:
			var e github.APIError
			_ = json.Unmarshal(r.Body, &e)
			return 0, fmt.Errorf("GET %s: %d %s: %s", path, r.Status, http.StatusText(r.Status), e.String())
		}
		*out = append(*out, items...)
		if len(items) < 100 {
			break
		}
	}
	return 0, nil
}
