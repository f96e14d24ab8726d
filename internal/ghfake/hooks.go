package ghfake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Comment is one issue comment posted through the double.
type Comment struct {
	Repo   string
	Number int
	Body   string
}

var issueCommentsRE = regexp.MustCompile(`^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$`)

// Comments returns the issue comments posted so far.
func (s *Server) Comments() []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Comment(nil), s.comments...)
}

// commentRoute is POST /repos/{owner}/{repo}/issues/{n}/comments with the
// double's token, answered as GitHub documents (201 and the comment).
func (s *Server) commentRoute(w http.ResponseWriter, r *http.Request) bool {
	m := issueCommentsRE.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		return false
	}
	if m[1] != s.Repo {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"})
		return true
	}
	var body struct {
		Body *string `json:"body"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.Body == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.\n\n\"body\" wasn't supplied.", "status": "422"})
		return true
	}
	n, _ := strconv.Atoi(m[2])
	s.comments = append(s.comments, Comment{Repo: m[1], Number: n, Body: *body.Body})
	id := len(s.comments)
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "node_id": fmt.Sprintf("IC_kwDO%04d", id),
		"url":      fmt.Sprintf("%s/repos/%s/issues/comments/%d", s.API.URL, m[1], id),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", m[1], n, id),
		"body":     *body.Body, "user": map[string]any{"login": "sandgate[bot]", "type": "Bot"},
		"created_at": "2024-05-04T01:14:52Z", "updated_at": "2024-05-04T01:14:52Z", "author_association": "NONE"})
	return true
}

// Delivery is one webhook delivery as GitHub sends it: headers and the
// raw body.
type Delivery struct {
	Event, ID, Signature string
	Body                 []byte
}

// Header sets the delivery's headers on h.
func (d Delivery) Header(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/044aadd")
	h.Set("X-GitHub-Event", d.Event)
	h.Set("X-GitHub-Delivery", d.ID)
	h.Set("X-GitHub-Hook-ID", "292430182")
	if d.Signature != "" {
		h.Set("X-Hub-Signature-256", d.Signature)
	}
}

var deliveries atomic.Int64

// Issue is the issue a delivery is about.
type Issue struct {
	Repo   string // owner/name
	Number int
	Title  string
	Body   string
}

// Labeled is an `issues` delivery, action labeled, signed with secret:
// sender added label to the issue.
func Labeled(secret string, is Issue, label, sender string) Delivery {
	return sign(secret, "issues", map[string]any{"action": "labeled", "issue": issueJSON(is),
		"label":      map[string]any{"id": 208045946, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "url": "https://api.github.com/repos/" + is.Repo + "/labels/" + label, "name": label, "color": "f29513", "default": false, "description": ""},
		"repository": repoJSON(is.Repo), "sender": userJSON(sender, "User")})
}

// Commented is an `issue_comment` delivery, action created, signed with
// secret: author commented body on the issue.
func Commented(secret string, is Issue, author, body string) Delivery {
	return sign(secret, "issue_comment", map[string]any{"action": "created", "issue": issueJSON(is),
		"comment": map[string]any{"id": 1362934389, "node_id": "IC_kwDOG", "html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-1362934389", is.Repo, is.Number),
			"body": body, "user": userJSON(author, "User"), "author_association": "MEMBER",
			"created_at": now(), "updated_at": now()},
		"repository": repoJSON(is.Repo), "sender": userJSON(author, "User")})
}

func sign(secret, event string, payload map[string]any) Delivery {
	body, _ := json.Marshal(payload)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return Delivery{Event: event, ID: fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", deliveries.Add(1)),
		Signature: "sha256=" + hex.EncodeToString(m.Sum(nil)), Body: body}
}

func issueJSON(is Issue) map[string]any {
	return map[string]any{"id": 1, "node_id": "MDU6SXNzdWUx", "number": is.Number, "title": is.Title, "body": is.Body,
		"url":      fmt.Sprintf("https://api.github.com/repos/%s/issues/%d", is.Repo, is.Number),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", is.Repo, is.Number),
		"state":    "open", "locked": false, "labels": []any{}, "user": userJSON("octocat", "User"), "author_association": "OWNER",
		"comments": 0, "created_at": "2024-05-04T01:14:52Z", "updated_at": now()}
}

// now is a payload's time of the event: GitHub's deliveries are sent as
// it happens, and a receiver may refuse an old one.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

func repoJSON(full string) map[string]any {
	owner, name, _ := cutRepo(full)
	return map[string]any{"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": name, "full_name": full,
		"private": false, "owner": userJSON(owner, "Organization"), "html_url": "https://github.com/" + full, "default_branch": "main"}
}

func userJSON(login, typ string) map[string]any {
	return map[string]any{"login": login, "id": 583231, "node_id": "MDQ6VXNlcjU4MzIzMQ==", "type": typ, "site_admin": false,
		"html_url": "https://github.com/" + login}
}

func cutRepo(full string) (string, string, bool) { return strings.Cut(full, "/") }
