package trigger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// maxGitHubBody caps a delivery: GitHub caps payloads at 25 MB, but the
// two events read here are an issue and a comment (65536 characters
// each), so a few MiB is plenty.
const maxGitHubBody = 4 << 20

var deliveryRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,100}$`)

// SignGitHub is X-Hub-Signature-256's value for body under secret.
func SignGitHub(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

type ghUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

// ghEvent is what is read of an issues or issue_comment delivery.
type ghEvent struct {
	Action string `json:"action"`
	Label  *struct {
		Name string `json:"name"`
	} `json:"label"`
	Issue struct {
		Number  int    `json:"number"`
		Title   string `json:"title"`
		Body    string `json:"body"`
		HTMLURL string `json:"html_url"`
		// UpdatedAt is when a label was added, for a labeled event.
		UpdatedAt time.Time `json:"updated_at"`
	} `json:"issue"`
	Comment *struct {
		Body      string    `json:"body"`
		User      ghUser    `json:"user"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"comment"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender ghUser `json:"sender"`
}

// maxDeliveryAge is how old an event may be and still start a run: a
// redelivery from GitHub's page inside it works; a delivery captured and
// replayed after its id left the store of those seen does not.
const maxDeliveryAge = 6 * time.Hour

// at is when the event happened: the comment's creation, or the issue's
// last update (a label added updates it); zero when the payload has none.
func (ev *ghEvent) at() time.Time {
	if ev.Comment != nil && !ev.Comment.CreatedAt.IsZero() {
		return ev.Comment.CreatedAt
	}
	return ev.Issue.UpdatedAt
}

// github serves POST /hooks/github. Nothing of the body is read before
// its signature checks out.
func (h *Handler) github(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, maxGitHubBody)
	if !ok {
		return
	}
	got := r.Header.Get("X-Hub-Signature-256")
	if !hmac.Equal([]byte(got), []byte(SignGitHub(h.opts.GitHubSecret, body))) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := r.Header.Get("X-GitHub-Delivery")
	if !deliveryRE.MatchString(id) {
		http.Error(w, "no X-GitHub-Delivery id", http.StatusBadRequest)
		return
	}
	// The id header is not signed: a captured delivery sent again under
	// a new id is caught by its body, which is (its signature names it).
	if fresh, err := h.seen.addAll("github:"+id, "github-body:"+strings.TrimPrefix(got, "sha256=")); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	} else if !fresh {
		fmt.Fprintln(w, "delivery", id, "was handled before: nothing done")
		return
	}
	var ev ghEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not a JSON payload", http.StatusBadRequest)
		return
	}
	// The store of deliveries seen is bounded: one old enough to have
	// left it is refused by its own time, which the signature covers.
	if at := ev.at(); !at.IsZero() && time.Since(at) > maxDeliveryAge {
		fmt.Fprintf(w, "ignored: the event is from %s, too old to act on (at most %s)\n", at.Format(time.RFC3339), maxDeliveryAge)
		return
	}
	code, msg := http.StatusOK, "ignored: not an event that starts runs"
	switch r.Header.Get("X-GitHub-Event") {
	case "ping":
		msg = "pong"
	case "issues":
		code, msg = h.onLabel(&ev)
	case "issue_comment":
		code, msg = h.onComment(&ev)
	}
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// onLabel starts the repository's label blueprint when an issue gets its
// label from an allowed person, with the issue's text as its input.
func (h *Handler) onLabel(ev *ghEvent) (int, string) {
	if ev.Action != "labeled" || ev.Label == nil || ev.Sender.Type == "Bot" {
		return http.StatusOK, "ignored: not a label added by a person"
	}
	rule := h.opts.Config.GitHub.Rule(ev.Repository.FullName)
	if rule == nil {
		return http.StatusForbidden, "refused: the repository is not in the trigger file"
	}
	if rule.Label == "" || ev.Label.Name != rule.Label {
		return http.StatusOK, "ignored: not the label that starts runs"
	}
	inputs := map[string]string{rule.IssueInput: issueText(ev)}
	return h.startFromIssue(rule, ev, ev.Sender.Login, rule.LabelBlueprint, inputs)
}

// onComment starts what a `/sandgate <blueprint> [key=value…]` comment
// asks for, from an allowed author.
func (h *Handler) onComment(ev *ghEvent) (int, string) {
	if ev.Action != "created" || ev.Comment == nil || ev.Comment.User.Type == "Bot" {
		return http.StatusOK, "ignored: not a new comment by a person"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(ev.Comment.Body), "\n")
	args, ok := strings.CutPrefix(strings.TrimSpace(line), "/sandgate")
	if !ok || (args != "" && args[0] != ' ' && args[0] != '\t') {
		return http.StatusOK, "ignored: not a /sandgate command"
	}
	rule := h.opts.Config.GitHub.Rule(ev.Repository.FullName)
	if rule == nil {
		return http.StatusForbidden, "refused: the repository is not in the trigger file"
	}
	login := ev.Comment.User.Login
	if !rule.Allows(login) {
		return h.refuseAuthor(rule, ev.Issue.Number, login)
	}
	name, inputs, err := parseCommand(args)
	if err == nil && !rule.Startable(name) {
		err = fmt.Errorf("blueprint %q may not be started from %s (the trigger file allows: %s)", name, rule.Name, strings.Join(rule.Startables(), ", "))
	}
	if err != nil {
		h.comment(rule, ev.Issue.Number, "sandgate refused: "+unmention(oneLine(err.Error())))
		return http.StatusUnprocessableEntity, "refused: " + err.Error()
	}
	if _, given := inputs[rule.IssueInput]; !given && h.takes(name, rule.IssueInput) {
		inputs[rule.IssueInput] = issueText(ev)
	}
	return h.startFromIssue(rule, ev, login, name, inputs)
}

// startFromIssue checks who asks and what, reserves a slot and starts the
// run, answering on the issue.
func (h *Handler) startFromIssue(rule *RepoRule, ev *ghEvent, login, name string, inputs map[string]string) (int, string) {
	n := ev.Issue.Number
	if !rule.Allows(login) {
		return h.refuseAuthor(rule, n, login)
	}
	if err := h.check(name, inputs); err != nil {
		h.comment(rule, n, "sandgate refused: "+unmention(oneLine(err.Error())))
		return http.StatusUnprocessableEntity, "refused: " + err.Error()
	}
	ok, tell := h.reserve(fmt.Sprintf("github:%s#%d", rule.Name, n))
	if !ok {
		if tell {
			h.comment(rule, n, "sandgate refused: "+h.busyReason())
		}
		return http.StatusTooManyRequests, "refused: " + h.busyReason()
	}
	source := ev.Issue.HTMLURL
	// The inbox shows the source; only an https link is kept as one.
	if runtime.CheckLabels(map[string]string{"source": source}) != nil || !strings.HasPrefix(source, "https://") {
		source = fmt.Sprintf("%s#%d", rule.Name, n)
	}
	req := Request{Blueprint: name, Repo: rule.Path, Inputs: inputs, By: "github:" + login,
		Labels: map[string]string{"trigger": "github", "by": login, "source": source}}
	h.launch(req, func(ctx context.Context, text string) { h.post(ctx, rule, n, text) })
	return http.StatusAccepted, "starting " + name
}

func (h *Handler) refuseAuthor(rule *RepoRule, n int, login string) (int, string) {
	if !h.firstRefusal(rule.Name, n, login) {
		return http.StatusForbidden, "refused: the author may not start runs here (told on the issue before)"
	}
	h.comment(rule, n, fmt.Sprintf("sandgate refused: %s may not start runs in %s (not among the trigger file's users)", login, rule.Name))
	return http.StatusForbidden, "refused: the author may not start runs here"
}

// unmention keeps a refusal that quotes a value (an input against its
// pattern) from mentioning anyone: "@org/team" in a bot's comment pings
// the whole team. A word joiner after each @ breaks the mention, not the
// text.
func unmention(s string) string { return strings.ReplaceAll(s, "@", "@\u2060") }

// issueText is the input an issue gives a run: its title, a blank line
// and its body, as written (data, never parsed here).
func issueText(ev *ghEvent) string {
	return strings.TrimSpace(ev.Issue.Title + "\n\n" + ev.Issue.Body)
}

// comment posts text on the issue in the background.
func (h *Handler) comment(rule *RepoRule, n int, text string) {
	h.out.Add(1)
	go func() {
		defer h.out.Done()
		h.post(h.ctx, rule, n, text)
	}()
}

// post posts one comment; a failure is the server's log's, not the run's.
func (h *Handler) post(ctx context.Context, rule *RepoRule, n int, text string) {
	if h.opts.GitHub == nil || n <= 0 {
		return
	}
	st, body, err := h.opts.GitHub.Send(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/issues/%d/comments", rule.Name, n), map[string]string{"body": text})
	if err == nil && st != http.StatusCreated {
		err = errors.New(oneLine(string(body)))
	}
	if err != nil {
		h.logf("comment on %s#%d: %v", rule.Name, n, err)
	}
}
