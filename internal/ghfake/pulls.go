package ghfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The pull request endpoints, as GitHub documents them
// (https://docs.github.com/rest/pulls/pulls): create (422 "A pull request
// already exists for owner:branch." while one is open for the same head
// and base), list (filtered by head "owner:branch", base and state) and
// update. Served to the test's token and to installation tokens.

var pullRE = regexp.MustCompile(`^/pulls/(\d+)$`)

// pullRoute serves the pull request endpoints; it reports whether the
// request was one. The caller holds s.mu.
func (s *Server) pullRoute(w http.ResponseWriter, r *http.Request) bool {
	m := repoPathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return false
	}
	repo, rest := m[1], m[2]
	switch {
	case rest == "/pulls" && r.Method == http.MethodPost:
		s.createPull(w, r, repo)
	case rest == "/pulls" && r.Method == http.MethodGet:
		s.listPulls(w, r, repo)
	case pullRE.MatchString(rest) && r.Method == http.MethodPatch:
		n, _ := strconv.Atoi(pullRE.FindStringSubmatch(rest)[1])
		s.updatePull(w, r, repo, n)
	default:
		return false
	}
	return true
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request, repo string) {
	var body struct {
		Title, Head, Base string
		Draft             bool
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	owner, _, _ := strings.Cut(repo, "/")
	for _, p := range s.pulls {
		if p.Repo == repo && p.Head == body.Head && p.Base == body.Base {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors":            []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + owner + ":" + body.Head + "."}},
				"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"})
			return
		}
	}
	s.pulls = append(s.pulls, Pull{Repo: repo, Title: body.Title, Head: body.Head, Base: body.Base, Draft: body.Draft})
	n := len(s.pulls)
	writeJSON(w, http.StatusCreated, s.pullJSON(n))
}

// pullJSON is pull request n (1-based) as GitHub returns it.
func (s *Server) pullJSON(n int) map[string]any {
	p := s.pulls[n-1]
	owner, _, _ := strings.Cut(p.Repo, "/")
	return map[string]any{"id": n, "node_id": fmt.Sprintf("PR_kwDO%04d", n), "number": n,
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", p.Repo, n), "state": "open", "draft": p.Draft,
		"title": p.Title, "head": map[string]any{"ref": p.Head, "label": owner + ":" + p.Head},
		"base": map[string]any{"ref": p.Base}}
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, repo string) {
	q := r.URL.Query()
	out := []map[string]any{}
	for i, p := range s.pulls {
		owner, _, _ := strings.Cut(p.Repo, "/")
		switch {
		case p.Repo != repo,
			q.Get("head") != "" && q.Get("head") != owner+":"+p.Head,
			q.Get("base") != "" && q.Get("base") != p.Base,
			q.Get("state") == "closed":
			continue
		}
		out = append(out, s.pullJSON(i+1))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) updatePull(w http.ResponseWriter, r *http.Request, repo string, n int) {
	if n < 1 || n > len(s.pulls) || s.pulls[n-1].Repo != repo {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	var body struct{ Title *string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	if body.Title != nil {
		s.pulls[n-1].Title = *body.Title
	}
	s.pulls[n-1].Updates++
	writeJSON(w, http.StatusOK, s.pullJSON(n))
}
