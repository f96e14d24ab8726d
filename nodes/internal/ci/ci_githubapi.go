package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/github"
)

// ghAPI is the slice of GitHub's REST API the ci node reads, through a
// client that sends the token only to base_url (or where the operator
// allowed) and bounds every request by the node's budget (deadline).
type ghAPI struct {
	client   *github.Client
	repo     string
	clock    ciClock
	deadline time.Time
}

// errTransient marks an answer worth polling again (5xx, a broken
// connection): CI being slow to answer is not CI failing.
var errTransient = errors.New("GitHub did not answer")

// ghError is a 4xx answer.
type ghError struct {
	Status  int
	Message string
}

func (e *ghError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// sleep waits d, or until the deadline, whichever comes first; at the
// deadline it reports errCITimedOut.
func (g *ghAPI) sleep(ctx context.Context, d time.Duration) error {
	left := g.deadline.Sub(g.clock.Now())
	if left <= 0 {
		return errCITimedOut
	}
	return g.clock.Sleep(ctx, min(d, left))
}

// get reads one API path as JSON into out, waiting out rate limits.
func (g *ghAPI) get(ctx context.Context, path string, out any) error {
	for {
		if !g.clock.Now().Before(g.deadline) {
			return errCITimedOut
		}
		r, err := g.do(ctx, path)
		if err != nil {
			return err
		}
		status, body := r.Status, r.Body
		if wait, ok := github.RateLimited(status, r.Header, body, g.clock.Now()); ok {
			if err := g.sleep(ctx, wait); err != nil {
				return err
			}
			continue
		}
		switch {
		case status == http.StatusOK:
			if err := json.Unmarshal(body, out); err != nil {
				return fmt.Errorf("GET %s: %w", path, err)
			}
			return nil
		case status >= 500:
			return fmt.Errorf("%w: GET %s: HTTP %d", errTransient, path, status)
		}
		var msg struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &msg)
		return &ghError{Status: status, Message: msg.Message}
	}
}

// do sends one authenticated GET. A request that gets no answer is
// the run's cancellation, the budget spent, or a network fault worth
// another poll.
func (g *ghAPI) do(ctx context.Context, path string) (*github.Reply, error) {
	r, err := g.client.Do(ctx, http.MethodGet, path, nil)
	var ne *github.NetError
	switch {
	case !errors.As(err, &ne):
		return r, err
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case ne.Deadline:
		return nil, errCITimedOut
	}
	return nil, fmt.Errorf("%w: %v", errTransient, ne.Err)
}

// requiredChecks reads the branch protection's required checks, and for
// each the app that must provide it, when the protection names one (a
// positive app_id; null or -1 accept any source). A branch without
// protection (404) or a token that may not read it (403) yields none and
// the HTTP status, for the feedback's note.
func (g *ghAPI) requiredChecks(ctx context.Context, branch string) ([]string, map[string]int64, int, error) {
	var out struct {
		Contexts []string `json:"contexts"`
		Checks   []struct {
			Context string `json:"context"`
			AppID   *int64 `json:"app_id"`
		} `json:"checks"`
	}
	err := g.get(ctx, "/repos/"+g.repo+"/branches/"+url.PathEscape(branch)+"/protection/required_status_checks", &out)
	var ge *ghError
	if errors.As(err, &ge) && (ge.Status == http.StatusNotFound || ge.Status == http.StatusForbidden) {
		return nil, nil, ge.Status, nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	seen, apps := map[string]bool{}, map[string]int64{}
	var names []string
	for _, n := range out.Contexts {
		seen[n], names = true, append(names, n)
	}
	for _, c := range out.Checks {
		if !seen[c.Context] {
			seen[c.Context], names = true, append(names, c.Context)
		}
		if c.AppID != nil && *c.AppID > 0 {
			apps[c.Context] = *c.AppID
		}
	}
	return names, apps, http.StatusOK, nil
}

// ghRun is a check run as GET …/commits/{ref}/check-runs lists it.
type ghRun struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	Status     string  `json:"status"`
	Conclusion *string `json:"conclusion"`
	DetailsURL string  `json:"details_url"`
	HTMLURL    string  `json:"html_url"`
	Output     struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
		Text    *string `json:"text"`
	} `json:"output"`
	App *struct {
		ID   int64  `json:"id"`
		Slug string `json:"slug"`
	} `json:"app"`
}

// checkRuns lists the commit's check runs, the latest run of each name
// from each app; runs for another head_sha (stale answers) are dropped.
// A later run replaces an earlier one only from the same app (a re-run):
// another app's run of the same name must not hide a failure (the
// caller keeps the worst of them).
func (g *ghAPI) checkRuns(ctx context.Context, sha string) ([]*ghCheck, error) {
	type key struct {
		app  int64
		name string
	}
	byName := map[key]*ghCheck{}
	for page := 1; page <= 10; page++ {
		var out struct {
			TotalCount int     `json:"total_count"`
			CheckRuns  []ghRun `json:"check_runs"`
		}
		if err := g.get(ctx, fmt.Sprintf("/repos/%s/commits/%s/check-runs?per_page=100&page=%d", g.repo, sha, page), &out); err != nil {
			return nil, err
		}
		for _, r := range out.CheckRuns {
			if !strings.EqualFold(r.HeadSHA, sha) {
				continue
			}
			c := r.check()
			if prev, ok := byName[key{c.app, c.Name}]; !ok || r.ID > prev.id {
				byName[key{c.app, c.Name}] = c
			}
		}
		if len(out.CheckRuns) < 100 || page*100 >= out.TotalCount {
			break
		}
	}
	out := make([]*ghCheck, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	return out, nil
}

func (r ghRun) check() *ghCheck {
	c := &ghCheck{Name: r.Name, id: r.ID, State: "pending", Conclusion: r.Status, URL: r.DetailsURL}
	if r.App != nil {
		c.app = r.App.ID
	}
	if c.URL == "" {
		c.URL = r.HTMLURL
	}
	if r.Status == "completed" {
		c.Conclusion = "failure"
		if r.Conclusion != nil {
			c.Conclusion = *r.Conclusion
		}
		switch c.Conclusion {
		case "success", "neutral", "skipped":
			c.State = ciSuccess
		case "cancelled":
			c.State = ciCancelled
		default: // failure, timed_out, action_required, stale, startup_failure
			c.State = ciFailure
		}
	}
	if m := jobRE.FindStringSubmatch(r.DetailsURL); m != nil {
		c.JobID, _ = strconv.ParseInt(m[1], 10, 64)
	} else if r.App != nil && r.App.Slug == "github-actions" {
		c.JobID = r.ID // an Actions check run's id is its job's id
	}
	var parts []string
	for _, p := range []*string{r.Output.Title, r.Output.Summary, r.Output.Text} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	c.Summary = strings.Join(parts, "\n")
	return c
}

// statuses lists the commit's combined status; an answer for another
// commit is stale and yields nothing.
func (g *ghAPI) statuses(ctx context.Context, sha string) ([]*ghCheck, error) {
	var out struct {
		SHA      string `json:"sha"`
		Statuses []struct {
			Context     string `json:"context"`
			State       string `json:"state"`
			TargetURL   string `json:"target_url"`
			Description string `json:"description"`
		} `json:"statuses"`
	}
	if err := g.get(ctx, fmt.Sprintf("/repos/%s/commits/%s/status?per_page=100", g.repo, sha), &out); err != nil {
		return nil, err
	}
	if !strings.EqualFold(out.SHA, sha) {
		return nil, nil
	}
	var checks []*ghCheck
	for _, s := range out.Statuses {
		c := &ghCheck{Name: s.Context, Conclusion: s.State, URL: s.TargetURL, Summary: s.Description, State: ciFailure}
		switch s.State {
		case "success":
			c.State = ciSuccess
		case "pending":
			c.State = "pending"
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// jobLog reads the tail of an Actions job's log (see github.Client.JobLog).
func (g *ghAPI) jobLog(ctx context.Context, id int64) (string, error) {
	return g.client.JobLog(ctx, fmt.Sprintf("/repos/%s/actions/jobs/%d/logs", g.repo, id))
}
