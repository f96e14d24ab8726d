// Package ghfake is a double of the GitHub REST endpoints the ci node
// reads, answering in the shapes GitHub documents: check runs for a ref,
// the combined status, a branch's required status checks, and job logs
// served through a redirect to another host; issue comments posted
// (hooks.go, which also builds signed webhook deliveries). It is also a GitHub App's
// side of GitHub (app.go): installation tokens minted for a JWT signed
// with the app's key, scoped to repositories and permissions, revoked and
// expired as GitHub does them, and pull requests opened with them. Tests script what CI reports
// per commit and poll, queue rate-limit answers, and read back every
// request, including what reached the log host.
package ghfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Run is one check run as a script states it.
type Run struct {
	ID      int64
	Name    string
	HeadSHA string // the commit the run is for; empty means the polled one
	// Status is queued, in_progress or completed.
	Status     string
	Conclusion string // for completed runs
	// JobID makes it an Actions run: details_url names the job.
	JobID   int64
	Summary string
	// AppID is the app that reported the run; 0 means Example CI (id 2),
	// or GitHub Actions (15368) for a run with a JobID.
	AppID int64
}

// Status is one commit status.
type Status struct {
	Context, State, Description string
}

// Answer is what CI reports for a commit at one poll.
type Answer struct {
	Runs []Run
	// StatusSHA is the sha the combined status answers for; empty means
	// the polled one (another one is a stale answer).
	StatusSHA string
	Statuses  []Status
}

// Limit is a rate-limit answer served once, to the first request whose
// path contains Path.
type Limit struct {
	Path    string
	Status  int
	Headers map[string]string
}

// Request is one request the API received.
type Request struct {
	Path string
	SHA  string // for commit endpoints
	Auth bool   // it carried the expected token
	At   time.Time
}

// Server is the double: API at 127.0.0.1, logs on a second server that
// must never see the token.
type Server struct {
	API, Logs   *httptest.Server
	Token, Repo string

	mu sync.Mutex
	// Script answers a commit's poll n (1-based, counted on check-runs).
	Script func(sha string, poll int) Answer
	// Required are the branch protection's required checks; nil answers
	// 404 (branch not protected).
	Required []string
	// RequiredApps pins required checks to the app that must report
	// them (the protection's app_id); others answer app_id null.
	RequiredApps map[string]int64
	Limits       []Limit
	// JobLogs are the log texts by job id.
	JobLogs  map[int64]string
	requests []Request
	logAuth  []string
	polls    map[string]int
	// apps and tokens are the GitHub App side (app.go); pulls are the
	// pull requests opened (pulls.go).
	apps   []App
	tokens map[string]*Minted
	pulls  []Pull
	acts   []Act
	// comments are the issue comments posted (hooks.go).
	comments []Comment
}

var (
	commitRE  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/commits/([0-9a-fA-F]{40})/(check-runs|status)$`)
	protectRE = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/branches/(.+)/protection/required_status_checks$`)
	jobLogRE  = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/actions/jobs/(\d+)/logs$`)
)

// New starts the double; Close stops it.
func New(token, repo string) *Server {
	s := &Server{Token: token, Repo: repo, JobLogs: map[int64]string{}, polls: map[string]int{}, tokens: map[string]*Minted{}}
	s.API = httptest.NewServer(http.HandlerFunc(s.api))
	s.Logs = httptest.NewServer(http.HandlerFunc(s.logs))
	return s
}

// Close stops both servers.
func (s *Server) Close() { s.API.Close(); s.Logs.Close() }

// Set changes the double's script under its lock.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Requests returns the API requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LogAuth returns the Authorization headers the log host received, one
// per request ("" when none was sent).
func (s *Server) LogAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.logAuth...)
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization") == "Bearer "+s.Token, At: time.Now()}
	if m := commitRE.FindStringSubmatch(r.URL.Path); m != nil {
		req.SHA = m[2]
	}
	s.requests = append(s.requests, req)
	if !req.Auth && s.appRoute(w, r) {
		return
	}
	if !req.Auth {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	for i, l := range s.Limits {
		if strings.Contains(r.URL.Path, l.Path) {
			s.Limits = append(s.Limits[:i:i], s.Limits[i+1:]...)
			for k, v := range l.Headers {
				w.Header().Set(k, v)
			}
			writeJSON(w, l.Status, map[string]any{"message": "API rate limit exceeded"})
			return
		}
	}
	s.route(w, r)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if s.commentRoute(w, r) || s.pullRoute(w, r) {
		return
	}
	if m := commitRE.FindStringSubmatch(p); m != nil && m[1] == s.Repo {
		sha := m[2]
		if m[3] == "check-runs" {
			s.polls[sha]++
		}
		a := s.Script(sha, max(1, s.polls[sha]))
		if m[3] == "check-runs" {
			writeJSON(w, http.StatusOK, s.checkRuns(sha, a))
		} else {
			writeJSON(w, http.StatusOK, s.combined(sha, a))
		}
		return
	}
	if m := protectRE.FindStringSubmatch(p); m != nil && m[1] == s.Repo {
		if s.Required == nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Branch not protected"})
			return
		}
		checks := []map[string]any{}
		for _, c := range s.Required {
			var app any
			if id, ok := s.RequiredApps[c]; ok {
				app = id
			}
			checks = append(checks, map[string]any{"context": c, "app_id": app})
		}
		writeJSON(w, http.StatusOK, map[string]any{"url": s.API.URL + p, "strict": true, "contexts": s.Required,
			"contexts_url": s.API.URL + p + "/contexts", "checks": checks})
		return
	}
	if m := jobLogRE.FindStringSubmatch(p); m != nil && m[1] == s.Repo {
		// GitHub answers 302 with a short-lived URL on its log storage.
		http.Redirect(w, r, fmt.Sprintf("%s/logs/%s/job-logs.txt?sig=signed", s.Logs.URL, m[2]), http.StatusFound)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

func (s *Server) checkRuns(sha string, a Answer) map[string]any {
	runs := []map[string]any{}
	for _, r := range a.Runs {
		head := r.HeadSHA
		if head == "" {
			head = sha
		}
		var conclusion any
		completed := any(nil)
		if r.Status == "completed" {
			conclusion, completed = r.Conclusion, "2024-05-04T01:20:52Z"
		}
		details := "https://ci.example.com/builds/" + strconv.FormatInt(r.ID, 10)
		app := map[string]any{"id": 2, "slug": "example-ci", "name": "Example CI"}
		if r.JobID != 0 {
			details = fmt.Sprintf("https://github.com/%s/actions/runs/777/job/%d", s.Repo, r.JobID)
			app = map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"}
		}
		if r.AppID != 0 {
			app = map[string]any{"id": r.AppID, "slug": fmt.Sprintf("app-%d", r.AppID), "name": "Some App"}
		}
		runs = append(runs, map[string]any{
			"id": r.ID, "head_sha": head, "node_id": "MDg6Q2hlY2tSdW40", "external_id": "",
			"url":      fmt.Sprintf("%s/repos/%s/check-runs/%d", s.API.URL, s.Repo, r.ID),
			"html_url": fmt.Sprintf("https://github.com/%s/runs/%d", s.Repo, r.ID), "details_url": details,
			"status": r.Status, "conclusion": conclusion, "started_at": "2024-05-04T01:14:52Z", "completed_at": completed,
			"output": map[string]any{"title": r.Name + " report", "summary": r.Summary, "text": nil, "annotations_count": 0,
				"annotations_url": fmt.Sprintf("%s/repos/%s/check-runs/%d/annotations", s.API.URL, s.Repo, r.ID)},
			"name": r.Name, "check_suite": map[string]any{"id": 5}, "app": app, "pull_requests": []any{},
		})
	}
	return map[string]any{"total_count": len(runs), "check_runs": runs}
}

func (s *Server) combined(sha string, a Answer) map[string]any {
	for_ := a.StatusSHA
	if for_ == "" {
		for_ = sha
	}
	state, statuses := "success", []map[string]any{}
	for i, st := range a.Statuses {
		switch {
		case st.State == "failure" || st.State == "error":
			state = "failure"
		case st.State == "pending" && state != "failure":
			state = "pending"
		}
		statuses = append(statuses, map[string]any{"url": s.API.URL + "/repos/" + s.Repo + "/statuses/" + for_,
			"id": i + 1, "node_id": "MDY6U3RhdHVzMQ==", "state": st.State, "description": st.Description,
			"target_url": "https://ci.example.com/status/" + st.Context, "context": st.Context,
			"created_at": "2024-05-04T01:14:52Z", "updated_at": "2024-05-04T01:14:52Z"})
	}
	if len(statuses) == 0 {
		state = "pending"
	}
	return map[string]any{"state": state, "statuses": statuses, "sha": for_, "total_count": len(statuses),
		"commit_url": s.API.URL + "/repos/" + s.Repo + "/commits/" + for_, "url": s.API.URL + "/repos/" + s.Repo + "/commits/" + for_ + "/status"}
}

func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logAuth = append(s.logAuth, r.Header.Get("Authorization"))
	parts := strings.Split(r.URL.Path, "/") // /logs/<id>/job-logs.txt
	if len(parts) != 4 || r.URL.Query().Get("sig") != "signed" {
		http.NotFound(w, r)
		return
	}
	id, _ := strconv.ParseInt(parts[2], 10, 64)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, s.JobLogs[id])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
