package nodetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// Quote quotes s for a single-quoted YAML scalar.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Indent indents every line of s for a YAML block.
func Indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// SeedRepo makes a Go module with a bug (Add subtracts) and a failing test.
func SeedRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":       "module calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
	}
	if err := gitfixture.Seed(dir, files, "calc with a bug"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Run runs a command in dir and returns its trimmed output, failing the
// test when it fails.
func Run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Harness is a runtime with the built-in types and a sandboxed
// environment over the repository Repo.
type Harness struct {
	RT   *runtime.Runtime
	Repo string
}

// NewHarness is a harness over repo with default options.
func NewHarness(t testing.TB, repo string) *Harness { return NewHarnessWith(t, repo, nodes.Options{}) }

// NewHarnessWith is NewHarness with the operator's options (allowances).
func NewHarnessWith(t testing.TB, repo string, o nodes.Options) *Harness {
	return &Harness{Repo: repo, RT: &runtime.Runtime{
		Registry: nodes.NewRegistryWith(o),
		RunsDir:  t.TempDir(),
		// Cold builds: these tests judge nodes and gates, and a warm box per
		// run would add its start and two go commands to each of hundreds
		// of runs. Warm builds have tests of their own (nodes/workspace),
		// the judge box's included, and the CLI's tests run with them.
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: t.TempDir(), Caches: nodes.GoCaches(), ColdBuilds: true, AllowEndpoints: o.AllowEndpoints}),
	}}
}

// Run runs the blueprint src to its end.
func (h *Harness) Run(t testing.TB, src string, inputs map[string]any) *runtime.Summary {
	t.Helper()
	bp, err := h.RT.Registry.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := h.RT.Run(ctx, bp, runtime.RunOptions{Inputs: inputs, Workspace: h.Repo})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum
}

// ReadVerify reads a run's verify.json.
func ReadVerify(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "verify.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// FixPatch is a unified diff that fixes SeedRepo's bug.
const FixPatch = `--- a/calc.go
+++ b/calc.go
@@ -1,4 +1,4 @@
 package calc
 
 // Add returns the sum of a and b.
-func Add(a, b int) int { return a - b }
+func Add(a, b int) int { return a + b }
`

// GitServer is a loopback smart-HTTP git server: git http-backend behind
// Go's CGI handler, serving the bare repositories under root. It records
// every request's basic-auth password ("" for none) and answers only
// requests carrying token.
type GitServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

// Seen are the basic-auth passwords of the requests so far.
func (g *GitServer) Seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.auths...)
}

// SmartHTTP serves a bare clone of repo as /calc.git.
func SmartHTTP(t *testing.T, repo, token string) (*GitServer, string) {
	return SmartHTTPWith(t, repo, GitServerOptions{Name: "calc.git", Auth: func(pass string, _ bool) int {
		if pass != token {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	}})
}

// GitServerOptions configure SmartHTTPWith.
type GitServerOptions struct {
	// Name is the bare repository's path under the root (owner/name.git).
	Name string
	// Auth answers a request's basic-auth password, for a push (write)
	// or a fetch: 200 lets it through, anything else is the answer.
	Auth func(pass string, write bool) int
	// Hold, when set, runs before a push's pack is received (the POST to
	// git-receive-pack), and may block.
	Hold func(r *http.Request)
}

// SmartHTTPWith serves a bare clone of repo as o.Name, asking o.Auth about
// every request; it returns the server and the root holding the clone.
func SmartHTTPWith(t *testing.T, repo string, o GitServerOptions) (*GitServer, string) {
	t.Helper()
	backend, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bare := filepath.Join(root, filepath.FromSlash(o.Name))
	Run(t, "", "git", "clone", "-q", "--bare", repo, bare)
	Run(t, bare, "git", "config", "http.receivepack", "true")
	git := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(backend)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	g := &GitServer{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, _ := r.BasicAuth()
		g.mu.Lock()
		g.auths = append(g.auths, pass)
		g.mu.Unlock()
		write := strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
		if st := o.Auth(pass, write); st != http.StatusOK {
			if st == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			}
			http.Error(w, http.StatusText(st), st)
			return
		}
		if o.Hold != nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			o.Hold(r)
		}
		git.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g, root
}

// ReadEvents reads a run's journal.
func ReadEvents(t *testing.T, dir string) []runtime.Event {
	evs, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// RunAsync runs src in the background; the summary arrives on the channel.
func (h *Harness) RunAsync(t *testing.T, src string) <-chan *runtime.Summary {
	t.Helper()
	done := make(chan *runtime.Summary, 1)
	bp, err := h.RT.Registry.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("blueprint: %v", err)
	}
	go func() {
		sum, err := h.RT.Run(context.Background(), bp, runtime.RunOptions{Workspace: h.Repo})
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- sum
	}()
	return done
}

// GHPull7 is pull request 7 as GitHub's create, get and list answer it.
const GHPull7 = `{"id":1,"node_id":"` + GHNodeID + `","number":7,"html_url":"https://github.com/acme/calc/pull/7","state":"open","draft":true,"head":{"ref":"fix/add","sha":"` + GHHead + `"},"base":{"ref":"main"}}`

// The double's pull request: its head commit, the commit a merge makes,
// and its GraphQL node id.
const (
	GHHead   = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	GHMerged = "e5bd3914e2e596debea16f433f57875b5b90bcd6"
	GHNodeID = "PR_kwDOABCD1234"
)

// GHRequest is one request the GitHub double saw.
type GHRequest struct {
	Method, Path, Query, Auth string
	Body                      map[string]any
}

// GitHubDouble answers like GitHub's REST and GraphQL APIs for pull
// request 7 of acme/calc, with the payloads GitHub documents, and checks
// the token. Redirect, when set, answers every request with a 307 there.
type GitHubDouble struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []GHRequest
	Redirect string
	// MergeStatus overrides the merge endpoint's answer (405, 409).
	MergeStatus int
	// Exists makes creating pull request 7 answer 422 "already exists";
	// Open lists it as the open pull request from fix/add (creating it
	// opens it).
	Exists, Open bool
	// Reviews and Comments answer the pull request's reviews and review
	// comments; Limited is how many reviews polls get 429 Retry-After: 30
	// first.
	Reviews  func() string
	Comments string
	Limited  int
}

// NewGitHubDouble starts the double; the test closes it.
func NewGitHubDouble(t *testing.T) *GitHubDouble {
	g := &GitHubDouble{}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// Seen are the requests the double answered.
func (g *GitHubDouble) Seen() []GHRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GHRequest(nil), g.reqs...)
}

func (g *GitHubDouble) serve(w http.ResponseWriter, r *http.Request) {
	req := GHRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization")}
	_ = json.NewDecoder(r.Body).Decode(&req.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reqs = append(g.reqs, req)
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, body string) { w.WriteHeader(status); io.WriteString(w, body) }
	switch {
	case g.Redirect != "":
		http.Redirect(w, r, g.Redirect+r.URL.Path, http.StatusTemporaryRedirect)
	case req.Auth != "Bearer gh-secret":
		reply(http.StatusUnauthorized, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls" && (g.Exists || g.Open):
		reply(http.StatusUnprocessableEntity, `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:fix/add."}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls":
		g.Open = true
		reply(http.StatusCreated, GHPull7)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls":
		if q := r.URL.Query(); (g.Exists || g.Open) && q.Get("head") == "acme:fix/add" && q.Get("state") == "open" {
			reply(http.StatusOK, "["+GHPull7+"]")
			return
		}
		reply(http.StatusOK, `[]`)
	case r.Method == http.MethodPatch && r.URL.Path == "/repos/acme/calc/pulls/7":
		reply(http.StatusOK, GHPull7)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && g.Limited > 0:
		g.Limited--
		w.Header().Set("Retry-After", "30")
		reply(http.StatusTooManyRequests, `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && g.Reviews != nil:
		reply(http.StatusOK, g.Reviews())
	case r.Method == http.MethodGet && r.URL.Path == "/repos/acme/calc/pulls/7/comments":
		reply(http.StatusOK, cmp.Or(g.Comments, "[]"))
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/calc/pulls/7/reviews" && req.Body["event"] == "APPROVE":
		reply(http.StatusOK, `{"id":80,"node_id":"MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=","body":"","state":"APPROVED","html_url":"https://github.com/acme/calc/pull/7#pullrequestreview-80","commit_id":"`+GHHead+`","submitted_at":"2019-11-17T17:43:43Z"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge" && g.MergeStatus == http.StatusMethodNotAllowed:
		reply(g.MergeStatus, `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge" && req.Body["sha"] != GHHead:
		reply(http.StatusConflict, `{"message":"Head branch was modified. Review and try the merge again.","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`)
	case r.Method == http.MethodPut && r.URL.Path == "/repos/acme/calc/pulls/7/merge":
		reply(http.StatusOK, `{"sha":"`+GHMerged+`","merged":true,"message":"Pull Request successfully merged"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/graphql" && strings.Contains(req.Body["query"].(string), "markPullRequestReadyForReview"):
		vars, _ := req.Body["variables"].(map[string]any)
		if vars["id"] != GHNodeID {
			reply(http.StatusOK, `{"data":null,"errors":[{"type":"NOT_FOUND","message":"Could not resolve to a node with the global id of 'x'"}]}`)
			return
		}
		reply(http.StatusOK, `{"data":{"markPullRequestReadyForReview":{"pullRequest":{"isDraft":false}}}}`)
	default:
		reply(http.StatusNotFound, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
	}
}

// PREntry queues an entry for pull request 7 whose approval does action.
func PREntry(t *testing.T, queue, baseURL, action, method string) {
	WriteEntry(t, queue, ReviewID, nodes.ReviewEntry{Title: "fix: Add adds", Branch: "fix/add", Commit: GHHead, Status: nodes.StatusPending, Created: time.Now().UTC(),
		OnApprove:   &nodes.ApproveAction{GitHub: action, MergeMethod: method},
		PullRequest: &nodes.PullRequest{Repo: "acme/calc", Number: 7, NodeID: GHNodeID, BaseURL: baseURL, TokenEnv: "SANDGATE_TEST_GH_TOKEN"}})
}

// ReviewID is the id of the entries tests queue.
const ReviewID = "20250101-000000-abcdef"

// WriteEntry queues e as entry id in the queue directory.
func WriteEntry(t *testing.T, queue, id string, e nodes.ReviewEntry) {
	t.Helper()
	e.ID = id
	b, _ := json.MarshalIndent(e, "", "  ")
	if err := os.MkdirAll(filepath.Join(queue, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(queue, id, "entry.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// LastAttempt is the last attempt of node in the run.
func LastAttempt(sum *runtime.Summary, node string) runtime.AttemptInfo {
	var last runtime.AttemptInfo
	for _, a := range sum.Attempts {
		if a.Node == node {
			last = a
		}
	}
	return last
}

// FileHolds reports whether the file at p holds s anywhere. It reads the
// file a chunk at a time: a run directory can hold the box's sparse disk
// image (4 GiB by default), which os.ReadFile would allocate whole, and
// a string conversion of it once more (this made a race test binary reach
// 17 GB). It reads only the file's data, not its holes: a hole reads as
// zeros, which hold no word without a NUL byte, and reading the image's
// 4 GiB of them took seconds of CPU per word and file. A word with a NUL
// byte is looked for in the whole file. A file that cannot be read
// holds nothing.
func FileHolds(p, s string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false
	}
	if strings.IndexByte(s, 0) >= 0 {
		return sectionHolds(f, 0, st.Size(), s)
	}
	for off := int64(0); off < st.Size(); {
		data, hole, err := nextData(f, off, st.Size())
		if err != nil { // ENXIO: only a hole from off on
			return false
		}
		if sectionHolds(f, data, hole-data, s) {
			return true
		}
		off = hole
	}
	return false
}

// sectionHolds reports whether the n bytes of f at off hold s, reading
// them 1 MiB at a time with an overlap of s's length.
func sectionHolds(f *os.File, off, n int64, s string) bool {
	r := io.NewSectionReader(f, off, n)
	want, keep := []byte(s), max(len(s)-1, 0)
	buf, chunk := make([]byte, 0, 1<<20+keep), make([]byte, 1<<20)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if bytes.Contains(buf, want) {
			return true
		}
		if len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if err != nil {
			return false
		}
	}
}
