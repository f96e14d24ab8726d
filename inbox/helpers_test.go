package inbox_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/internal/browsertest"
	"github.com/sandgate/sandgate/runtime"
)

// xss is what repository text may contain; every page must show it as text.
const xss = `<script>alert("xss")</script><img src=x onerror=alert(1)><!--sandgate:who-->`

// stepNode passes or fails per attempt, writes a log file and publishes an
// output; "wait" nodes block until the test closes gate.
type stepNode struct {
	spec *blueprint.Node
	gate chan struct{}
}

func (n *stepNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	if n.gate != nil && n.spec.Type == "wait" {
		select {
		case <-n.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	_ = os.MkdirAll(in.Dir, 0o755)
	_ = os.WriteFile(filepath.Join(in.Dir, "step.log"), []byte("log of "+in.NodeID+" "+xss+"\n"), 0o644)
	outcomes, _ := n.spec.Config["outcomes"].([]string)
	res := &runtime.Result{Outcome: runtime.OutcomePass, Tokens: 10, Outputs: map[string]any{"note": xss}}
	if len(outcomes) > 0 && outcomes[min(in.Attempt, len(outcomes))-1] == "fail" {
		res.Outcome, res.Feedback = runtime.OutcomeFail, "check failed: "+xss
		res.Outputs["failures"] = []string{"TestFlakyParser/" + in.NodeID}
	}
	return res, nil
}

type seed struct {
	reg  *runtime.Registry
	gate chan struct{}
}

func newSeed(t testing.TB) *seed {
	s := &seed{reg: runtime.NewRegistry(), gate: make(chan struct{})}
	for _, name := range []string{"step", "wait"} {
		err := s.reg.Register(runtime.Type{
			Spec: blueprint.NodeType{Name: name, Fields: map[string]blueprint.Field{"outcomes": {Kind: blueprint.KindStringList}},
				Outputs: map[string]blueprint.Kind{"note": blueprint.KindString, "failures": blueprint.KindStringList}},
			New: func(spec *blueprint.Node) (runtime.Node, error) { return &stepNode{spec: spec, gate: s.gate}, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// loopBP is implement → check, with check failing as told; a check that
// keeps failing exhausts its bound and hands the run off.
func loopBP(name, first, checkOutcomes string) string {
	return fmt.Sprintf(`version: 1
name: %s
start: implement
nodes:
  implement: {type: %s, next: check}
  check:
    type: step
    outcomes: %s
    on_pass: done
    on_fail: {to: implement, max: 2}
  done: {type: succeed}
`, name, first, checkOutcomes)
}

// run carries out one genuine run with the real runtime.
func (s *seed) run(t testing.TB, runsDir, id, src string) *runtime.Summary {
	t.Helper()
	return s.runWith(t, runsDir, id, src, nil)
}

// runWith is run with inputs (src must declare them).
func (s *seed) runWith(t testing.TB, runsDir, id, src string, inputs map[string]any) *runtime.Summary {
	t.Helper()
	sum, err := s.runErr(runsDir, id, src, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// runErr is runWith for goroutines, which must not call t.Fatal.
func (s *seed) runErr(runsDir, id, src string, inputs map[string]any) (*runtime.Summary, error) {
	return s.runOpts(runsDir, id, src, runtime.RunOptions{Inputs: inputs})
}

// runOpts is runErr with more of the run's options (labels); the run id
// is set here, and the workspace unless opts names one.
func (s *seed) runOpts(runsDir, id, src string, opts runtime.RunOptions) (*runtime.Summary, error) {
	bp, err := blueprint.Parse("blueprint.yaml", []byte(src), blueprint.WithTypes(s.reg))
	if err != nil {
		return nil, err
	}
	ws := cmp.Or(opts.Workspace, filepath.Join(filepath.Dir(runsDir), "repos", id))
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	rt := &runtime.Runtime{Registry: s.reg, RunsDir: runsDir, NoSync: true}
	opts.RunID, opts.Workspace = id, ws
	return rt.Run(context.Background(), bp, opts)
}

// actions records what the forms asked for.
type actions struct {
	mu    sync.Mutex
	calls []string
	// fail, when set, is every action's error.
	fail error
	// decided, when set, carries a decision out (as the embedder's
	// queue would: entry.json's status changes).
	decided func(queueDir, id string, approve bool)
}

func (a *actions) Answer(_ context.Context, runDir, node, note, by string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, fmt.Sprintf("answer %s %s %q %s", filepath.Base(runDir), node, note, by))
	return a.fail
}

func (a *actions) Decide(_ context.Context, queueDir, id string, approve bool, note, by string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, fmt.Sprintf("decide %s %s %v %q %s", filepath.Base(queueDir), id, approve, note, by))
	if a.decided != nil {
		a.decided(queueDir, id, approve)
	}
	return a.fail
}

func (a *actions) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.calls...)
}

// world is a runs directory with a succeeded and a handed-off run, a
// review entry full of hostile text, and a server over them.
type world struct {
	runs, reviews string
	seed          *seed
	acts          *actions
	srv           *inbox.Server
	ts            *httptest.Server
}

func newWorld(t *testing.T, token string) *world {
	t.Helper()
	return newWorldWith(t, func(o *inbox.Options) { o.Token = token })
}

// newWorldWith is newWorld with the server's options changed by opt.
func newWorldWith(t *testing.T, opt func(*inbox.Options)) *world {
	t.Helper()
	return newWorldW(t, func(_ *world, o *inbox.Options) { opt(o) })
}

// newWorldW is newWorldWith for options that need the world.
func newWorldW(t *testing.T, opt func(*world, *inbox.Options)) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{runs: filepath.Join(base, "runs"), reviews: filepath.Join(base, "reviews"), seed: newSeed(t), acts: &actions{}}
	w.seed.run(t, w.runs, "run-ok", loopBP("loop", "step", "[fail, pass]"))
	w.seed.run(t, w.runs, "run-handoff", loopBP("loop", "step", "[fail]"))
	writeVerify(t, filepath.Join(w.runs, "run-ok"))
	writeTranscript(t, filepath.Join(w.runs, "run-ok", "nodes", "implement", "1"))
	writeReview(t, filepath.Join(w.reviews, "rev-1"), filepath.Join(w.runs, "run-ok"))
	opts := inbox.Options{RunsDirs: []string{w.runs}, ReviewDirs: []string{w.reviews},
		Actions: w.acts, Types: w.seed.reg, By: "tester", Poll: 20e6}
	opt(w, &opts)
	srv, err := inbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Index().MinRefresh = -1
	t.Cleanup(srv.Index().Close) // its inotify instance
	w.srv = srv
	w.ts = httptest.NewServer(srv)
	t.Cleanup(func() { browsertest.CloseServer(w.ts) })
	return w
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeVerify(t testing.TB, runDir string) {
	writeFile(t, filepath.Join(runDir, "verify.json"), `{"pass":false,"gates":{"test":{"node":"test","kind":"tests","pass":false,
"tests":{"passed":1,"failed":1,"skipped":0},"details":{"failed":["TestX/`+jsonEsc(xss)+`"]},"duration_ms":12}}}`)
}

func writeTranscript(t testing.TB, dir string) {
	writeFile(t, filepath.Join(dir, "transcript.jsonl"),
		`{"kind":"completion","data":{"role":"assistant","content":"Summary: `+jsonEsc(xss)+`","tool_calls":[{"function":{"name":"run","arguments":"{\"command\":\"go test\"}"}}]}}`+"\n"+
			`{"kind":"tool","data":{"name":"run","arguments":"{}","result":"ok `+jsonEsc(xss)+`"}}`+"\n")
}

func writeReview(t testing.TB, dir, runDir string) {
	writeFile(t, filepath.Join(dir, "entry.json"), `{"id":"rev-1","title":"Fix `+jsonEsc(xss)+`","branch":"sandgate/fix-`+jsonEsc(xss)+`","commit":"abc","base":"def","run_dir":"`+runDir+`","status":"pending","created":"2026-01-02T03:04:05Z"}`)
	writeFile(t, filepath.Join(dir, "diff.patch"), "diff --git a/"+xss+".go b/"+xss+".go\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new "+xss+"\n")
	writeFile(t, filepath.Join(dir, "summary.md"), "## Summary\n\nThe agent says "+xss+"\n")
	writeVerify(t, dir)
}

func jsonEsc(s string) string {
	out := ""
	for _, c := range s {
		if c == '"' || c == '\\' {
			out += `\`
		}
		out += string(c)
	}
	return out
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b []byte
	b, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func appendFile(t testing.TB, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
