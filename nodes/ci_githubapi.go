package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ghAPI is the slice of GitHub's REST API the ci node reads, with the
// token sent only to base_url (or where the operator allowed) and every
// request bounded by the node's budget.
type ghAPI struct {
	base, repo, token string
	clock             ciClock
	// check refuses a URL the token may not go to (CheckEndpoint).
	check    func(string) error
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

// rateLimited reads GitHub's rate-limit answers: Retry-After on a 429 or
// 403, x-ratelimit-remaining: 0 with x-ratelimit-reset (epoch seconds),
// or a bare 429 or a 403 whose body names a (secondary) rate limit, for
// which GitHub says to wait at least a minute. The ci and review nodes
// share it.
func rateLimited(status int, h http.Header, body []byte, now time.Time) (time.Duration, bool) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		return max(time.Duration(s)*time.Second, time.Second), true
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			// A second more: the reset time is whole seconds.
			return max(time.Unix(reset, 0).Sub(now)+time.Second, time.Second), true
		}
		return time.Minute, true
	}
	if status == http.StatusTooManyRequests || strings.Contains(strings.ToLower(string(body)), "rate limit") {
		return time.Minute, true
	}
	return 0, false
}

// get reads one API path as JSON into out, waiting out rate limits.
func (g *ghAPI) get(ctx context.Context, path string, out any) error {
	for {
		if !g.clock.Now().Before(g.deadline) {
			return errCITimedOut
		}
		status, h, body, err := g.do(ctx, g.base+path)
		if err != nil {
			return err
		}
		if wait, ok := rateLimited(status, h, body, g.clock.Now()); ok {
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

// do sends one authenticated GET; redirects are followed only to URLs
// the token may go to.
func (g *ghAPI) do(ctx context.Context, u string) (int, http.Header, []byte, error) {
	if err := g.check(u); err != nil {
		return 0, nil, nil, err
	}
	rctx, cancel := context.WithDeadline(ctx, g.deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	g.authorize(req)
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return g.check(req.URL.String())
	}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, g.netError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, nil, nil, g.netError(ctx, rctx, err)
	}
	return resp.StatusCode, resp.Header, body, nil
}

func (g *ghAPI) authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
}

// netError classifies a failed request: the run canceled, the budget
// spent, or a network fault worth another poll.
func (g *ghAPI) netError(ctx, rctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case rctx.Err() != nil:
		return errCITimedOut
	}
	return fmt.Errorf("%w: %v", errTransient, err)
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

// jobLog reads the tail of an Actions job's log. GitHub answers with a
// redirect to short-lived storage on another host; that request is made
// anew without the token, whatever host it names.
func (g *ghAPI) jobLog(ctx context.Context, id int64) (string, error) {
	u := fmt.Sprintf("%s/repos/%s/actions/jobs/%d/logs", g.base, g.repo, id)
	if err := g.check(u); err != nil {
		return "", err
	}
	rctx, cancel := context.WithDeadline(ctx, g.deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	g.authorize(req)
	stop := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := stop.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return readTail(resp.Body), nil
	case http.StatusFound, http.StatusMovedPermanently, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil || (loc.Scheme != "https" && loc.Scheme != "http") {
		return "", fmt.Errorf("the log redirect names no http(s) URL")
	}
	return fetchPlain(rctx, loc.String())
}

// fetchPlain GETs a URL with no credential at all: a fresh request, so no
// header of the API request can follow it.
func fetchPlain(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("log download: HTTP %d", resp.StatusCode)
	}
	return readTail(resp.Body), nil
}

// readTail reads up to 64 MiB and keeps the last 256 KiB: a log's
// failure is at its end, and only a few lines of it reach the feedback.
func readTail(r io.Reader) string {
	const keep = 256 << 10
	var b []byte
	buf := make([]byte, 64<<10)
	lr := io.LimitReader(r, 64<<20)
	for {
		n, err := lr.Read(buf)
		b = append(b, buf[:n]...)
		if len(b) > 2*keep {
			b = b[:copy(b, b[len(b)-keep:])]
		}
		if err != nil {
			break
		}
	}
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
