package trigger

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/internal/slackfake"
	"github.com/sandgate/sandgate/internal/wait"
	"github.com/sandgate/sandgate/nodes"
)

const (
	ghSecret    = "It's a Secret to Everybody"
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	ghToken     = "ghp_trigger_replies_0123456789"
)

// chore takes a free-text task and a ticket with a pattern.
const chore = `version: 1
name: chore
inputs:
  task: {required: true}
  ticket: {pattern: 'OPS-[0-9]+'}
start: work
nodes:
  work: {type: succeed}
`

// recorder is the Starter of these tests: it records each request and
// gives it a run directory that never ends (the end-to-end tests in
// cmd/sandgate start real runs).
type recorder struct {
	mu   sync.Mutex
	dir  string
	reqs []Request
}

func (r *recorder) StartTriggered(_ context.Context, req Request) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	dir := filepath.Join(r.dir, fmt.Sprintf("run-%d", len(r.reqs)))
	return dir, os.Mkdir(dir, 0o755)
}

func (r *recorder) started() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

type world struct {
	h     *Handler
	gh    *ghfake.Server
	slack *slackfake.Receiver
	start *recorder
	ts    *httptest.Server
	state string
}

const baseConfig = `version: 1
public_url: https://inbox.example.com/
max_runs: MAX
github:
  secret_env: GH_SECRET
  token_env: GH_TOKEN
  repositories:
    - name: acme/api
      label: sandgate
      label_blueprint: chore
      blueprints: [chore]
      users: [ana]
slack:
  signing_secret_env: SLACK_SECRET
  response_url_prefix: SLACKURL/commands/
  teams: [T0001]
  channels: [C2147483705]
  users: [U2147483697]
  blueprints: [chore]
`

func newWorld(t *testing.T, max int) *world {
	t.Helper()
	w := &world{gh: ghfake.New(ghToken, "acme/api"), slack: slackfake.NewReceiver(), start: &recorder{dir: t.TempDir()}, state: t.TempDir()}
	t.Cleanup(w.gh.Close)
	t.Cleanup(w.slack.Close)
	w.open(t, max)
	return w
}

// open (re)starts the handler over the world's state directory.
func (w *world) open(t *testing.T, max int) {
	t.Helper()
	src := strings.NewReplacer("MAX", fmt.Sprint(max), "SLACKURL", w.slack.Server.URL).Replace(baseConfig)
	cfg, err := Parse("triggers.yaml", []byte(src), func(n string) bool { return n == "chore" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir = w.state
	t.Setenv("GH_TOKEN", ghToken)
	gh := nodes.GitHubFromEnv(w.gh.API.URL, "GH_TOKEN", "test github", []string{w.gh.API.URL})
	w.h, err = New(Options{Config: cfg, Starter: w.start, GitHub: gh, Blueprints: fstest.MapFS{"chore.yaml": {Data: []byte(chore)}},
		GitHubSecret: []byte(ghSecret), SlackSecret: []byte(slackSecret), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.h.Close)
	mux := http.NewServeMux()
	for p, h := range w.h.Routes() {
		mux.Handle(p, h)
	}
	w.ts = httptest.NewServer(mux)
	t.Cleanup(w.ts.Close)
}

// deliver posts a GitHub delivery and returns the status and answer.
func (w *world) deliver(t *testing.T, d ghfake.Delivery) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.ts.URL+"/hooks/github", bytes.NewReader(d.Body))
	d.Header(req.Header)
	return do(t, req)
}

// command posts a signed slash command.
func (w *world) command(t *testing.T, r slackfake.Request) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.ts.URL+"/hooks/slack", bytes.NewReader(r.Body))
	r.Header(req.Header)
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// comments returns the replies posted once those in flight are done.
func (w *world) comments(t *testing.T, n int) []ghfake.Comment {
	t.Helper()
	wait.Until(t, fmt.Sprintf("%d comments", n), func() bool { return len(w.gh.Comments()) >= n })
	return w.gh.Comments()
}
