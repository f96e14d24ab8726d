package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// modelServer is a real OpenAI-compatible endpoint on loopback with
// scripted answers; it records every request it gets.
type modelServer struct {
	mu       sync.Mutex
	replies  []func(w http.ResponseWriter)
	requests []map[string]any
	auth     []string
	srv      *httptest.Server
}

func newModelServer(t *testing.T, replies ...func(w http.ResponseWriter)) *modelServer {
	m := &modelServer{replies: replies}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		m.mu.Lock()
		m.requests = append(m.requests, body)
		m.auth = append(m.auth, r.Header.Get("Authorization"))
		var reply func(http.ResponseWriter)
		if len(m.replies) > 0 {
			reply, m.replies = m.replies[0], m.replies[1:]
		}
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if reply == nil {
			reply = say("done")
		}
		reply(w)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func completion(msg map[string]any, in, out int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		json.NewEncoder(w).Encode(map[string]any{"id": "c", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
	}
}

func say(text string) func(http.ResponseWriter) {
	return completion(map[string]any{"role": "assistant", "content": text}, 10, 5)
}

func call(name, args string) func(http.ResponseWriter) {
	return completion(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_" + name, "type": "function",
		"function": map[string]any{"name": name, "arguments": args}}}}, 100, 20)
}

func status(code int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"status %d","type":"server_error"}}`, code)
	}
}

const agentBlueprint = `version: 1
name: agent
inputs:
  task: {required: true}
BUDGET
start: implement
nodes:
  implement:
    type: agent
    model: test-model
    base_url: URL
    api_key_env: SANDGATE_TEST_MODEL_KEY
    max_turns: TURNS
    prompt: "Task: ${{ inputs.task }}"
    on_pass: test
    on_fail: failed
  test:
    type: test
    run: go test -json ./...
    on_pass: done
    on_fail: {to: implement, max: 1}
  done: {type: succeed}
  failed: {type: fail, reason: the agent gave up}
`

func agentRun(t *testing.T, m *modelServer, turns int, budget string) (*runtime.Summary, string) {
	t.Helper()
	t.Setenv("SANDGATE_TEST_MODEL_KEY", "sk-test-key")
	repo := nodetest.SeedRepo(t)
	src := strings.NewReplacer("URL", m.srv.URL+"/v1", "TURNS", fmt.Sprint(turns), "BUDGET", budget).Replace(agentBlueprint)
	sum := agentHarness(t, repo, m).Run(t, src, map[string]any{"task": "make Add add"})
	return sum, repo
}

// agentHarness is a harness whose operator allows the test model server as
// an endpoint, so agentBlueprint may name it with its own key.
func agentHarness(t *testing.T, repo string, m *modelServer) *nodetest.Harness {
	h := nodetest.NewHarness(t, repo)
	h.RT.Registry = nodes.NewRegistryWith(nodes.Options{AllowEndpoints: []string{m.srv.URL + "/v1"}})
	return h
}

func transcriptText(t *testing.T, sum *runtime.Summary) string {
	files, _ := filepath.Glob(filepath.Join(sum.Dir, "nodes", "implement", "*", "transcript.jsonl"))
	var all string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all += string(b)
	}
	return all
}

func TestAgentFixesBugThroughTheRealClient(t *testing.T) {
	m := newModelServer(t,
		call("read_file", `{"path":"calc.go"}`),
		call("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		call("finish", `{"summary":"Add now adds."}`))
	sum, _ := agentRun(t, m, 10, "")
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s\n%s", sum.Status, sum.Reason, transcriptText(t, sum))
	}
	if m.auth[0] != "Bearer sk-test-key" {
		t.Fatalf("authorization: %q", m.auth[0])
	}
	first := m.requests[0]
	msgs := first["messages"].([]any)
	if sys := msgs[0].(map[string]any)["content"].(string); !strings.HasPrefix(sys, "Task: make Add add") {
		t.Fatalf("system prompt: %q", sys)
	}
	if n := len(first["tools"].([]any)); n != len(agent.DefaultTools()) {
		t.Fatalf("%d tools offered", n)
	}
	// The tool result of read_file reached the model.
	second := m.requests[1]["messages"].([]any)
	if res := second[len(second)-1].(map[string]any)["content"].(string); !strings.Contains(res, "return a - b") {
		t.Fatalf("read_file result: %q", res)
	}
	var outputs map[string]any
	for _, ev := range nodetest.ReadEvents(t, sum.Dir) {
		if ev.Type == runtime.EvNodeFinished && ev.Node == "implement" {
			outputs = ev.Outputs
		}
	}
	if outputs["turns"] != 3.0 || outputs["tool_calls"] != 3.0 || outputs["tokens_in"] != 300.0 || outputs["summary"] != "Add now adds." {
		t.Fatalf("outputs: %v", outputs)
	}
	if sum.Tokens != 360 {
		t.Fatalf("run tokens %d", sum.Tokens)
	}
}

func TestAgentBadToolCallsGoBackToTheModel(t *testing.T) {
	m := newModelServer(t,
		call("read_file", `{"path": `),
		call("delete_everything", `{}`),
		call("read_file", `{}`),
		call("read_file", `{"path":"/etc/passwd"}`),
		call("write_file", `{"path":"../outside.txt","content":"x"}`),
		call("run", `{"command":"ln -s /etc planted"}`),
		call("write_file", `{"path":"planted/pwned","content":"x"}`),
		call("read_file", `{"path":".git/config"}`),
		call("edit_file", `{"path":"calc.go","old":"nothing like this","new":"x"}`),
		call("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		call("finish", `{"summary":"fixed despite my mistakes"}`))
	sum, _ := agentRun(t, m, 20, "")
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	var results []string
	for _, req := range m.requests[1:] {
		msgs := req["messages"].([]any)
		results = append(results, msgs[len(msgs)-1].(map[string]any)["content"].(string))
	}
	wants := []string{"not a JSON object", `unknown tool "delete_everything"`, `missing argument "path"`, "absolute paths are not allowed",
		`".." is not allowed`, "exit code 0", "resolves outside the workspace", ".git is not yours", "old text not found", "edited calc.go"}
	for i, want := range wants {
		if !strings.Contains(results[i], want) {
			t.Errorf("tool result %d: %q lacks %q", i, results[i], want)
		}
	}
}

func TestAgentRetriesRateLimitsAndFailsCleanlyOnOutage(t *testing.T) {
	m := newModelServer(t, status(429, "0"), status(503, ""), call("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`), call("finish", `{"summary":"ok"}`))
	sum, _ := agentRun(t, m, 10, "")
	if sum.Status != runtime.StatusSucceeded || len(m.requests) != 4 {
		t.Fatalf("after 429 and 503: %s (%s), %d requests", sum.Status, sum.Reason, len(m.requests))
	}
	storm := make([]func(http.ResponseWriter), 10)
	for i := range storm {
		storm[i] = status(500, "0")
	}
	m = newModelServer(t, storm...)
	sum, _ = agentRun(t, m, 10, "")
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "model call failed after retries") {
		t.Fatalf("500 storm: %s (%s)", sum.Status, sum.Reason)
	}
	if len(m.requests) != 5 {
		t.Fatalf("want 5 bounded attempts, got %d", len(m.requests))
	}
}

func TestAgentBounds(t *testing.T) {
	t.Run("max_turns", func(t *testing.T) {
		m := newModelServer(t, call("list_files", `{}`), call("list_files", `{}`), call("list_files", `{}`))
		sum, _ := agentRun(t, m, 2, "")
		if sum.Status != runtime.StatusFailed || len(m.requests) != 2 {
			t.Fatalf("%s (%s), %d requests", sum.Status, sum.Reason, len(m.requests))
		}
	})
	t.Run("token budget hands off", func(t *testing.T) {
		m := newModelServer(t, call("list_files", `{}`), call("finish", `{"summary":"x"}`))
		sum, _ := agentRun(t, m, 10, "budget: {tokens: 150}")
		if sum.Status != runtime.StatusHandedOff || sum.Kind != "tokens" {
			t.Fatalf("%s/%s (%s)", sum.Status, sum.Kind, sum.Reason)
		}
	})
	t.Run("handoff tool", func(t *testing.T) {
		m := newModelServer(t, call("handoff", `{"reason":"the task needs production access"}`))
		sum, _ := agentRun(t, m, 10, "")
		if sum.Status != runtime.StatusHandedOff || !strings.Contains(sum.Reason, "production access") {
			t.Fatalf("%s (%s)", sum.Status, sum.Reason)
		}
	})
}

func TestAgentGetsGateFeedbackAndRules(t *testing.T) {
	m := newModelServer(t,
		call("finish", `{"summary":"I think it is fine"}`),
		call("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		call("finish", `{"summary":"fixed for real"}`))
	t.Setenv("SANDGATE_TEST_MODEL_KEY", "sk-test-key")
	repo := nodetest.SeedRepo(t)
	os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Always run go test before finishing.\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, ".cursor", "rules"), 0o755)
	os.WriteFile(filepath.Join(repo, ".cursor", "rules", "go.mdc"), []byte("---\ndescription: Go style\nglobs: \"*.go\"\nalwaysApply: false\n---\nUse gofmt.\n"), 0o644)
	nodetest.Run(t, repo, "git", "add", ".")
	nodetest.Run(t, repo, "git", "-c", "user.name=d", "-c", "user.email=d@d", "commit", "-q", "-m", "rules")
	src := strings.NewReplacer("URL", m.srv.URL+"/v1", "TURNS", "10", "BUDGET", "").Replace(agentBlueprint)
	sum := agentHarness(t, repo, m).Run(t, src, map[string]any{"task": "make Add add"})
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("%s (%s)", sum.Status, sum.Reason)
	}
	sys := m.requests[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "Always run go test before finishing.") || !strings.Contains(sys, "applies to files matching *.go") {
		t.Fatalf("rules not in the system prompt:\n%s", sys)
	}
	retry := m.requests[1]["messages"].([]any)[1].(map[string]any)["content"].(string)
	if !strings.Contains(retry, "Add(2, 3) = -1, want 5") {
		t.Fatalf("the failing test's output did not reach the retry:\n%s", retry)
	}
}

func TestScriptRecordReplay(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "fix.yaml")
	os.WriteFile(script, []byte(`- tool_calls:
    - {function: {name: read_file, arguments: {path: calc.go}}}
- tool_calls:
    - {function: {name: edit_file, arguments: '{"path":"calc.go","old":"a - b","new":"a + b"}'}}
- content: Fixed the sign in Add.
`), 0o644)
	rec := filepath.Join(dir, "session.jsonl")
	bp := `version: 1
name: offline
start: implement
nodes:
  implement: {type: agent, prompt: fix calc, model: MODEL, next: test}
  test: {type: test, run: go test -json ./..., on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`
	runWith := func(model, record, prompt string) *runtime.Summary {
		h := nodetest.NewHarness(t, repo)
		h.RT.Registry = nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Record: record}})
		return h.Run(t, strings.NewReplacer("MODEL", model, "fix calc", prompt).Replace(bp), nil)
	}
	if sum := runWith("script:"+script, rec, "fix calc"); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("scripted run: %s (%s)", sum.Status, sum.Reason)
	}
	if b, _ := os.ReadFile(rec); strings.Count(string(b), "\n") != 3 {
		t.Fatalf("recording has %d exchanges", strings.Count(string(b), "\n"))
	}
	if sum := runWith("replay:"+rec, "", "fix calc"); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("replay: %s (%s)", sum.Status, sum.Reason)
	}
	sum := runWith("replay:"+rec, "", "fix calc and be brief")
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "no longer matches the recording") {
		t.Fatalf("a changed prompt must fail the replay loudly: %s (%s)", sum.Status, sum.Reason)
	}
}

// TestAgentKeyNeverGoesToABlueprintEndpoint: a blueprint names the GitHub
// token as the agent's key and a loopback model server as its endpoint.
// Loading refuses it with the field's position; a blueprint that skipped
// the loader's check is refused by the agent before any request; a key-only
// blueprint cannot send the token to the operator's endpoint either. The
// server must see no request at all. With the operator's allowance the same
// server does get the token, which proves it would have seen a leak.
func TestAgentKeyNeverGoesToABlueprintEndpoint(t *testing.T) {
	const canary = "canary-gh-agent-4e1d"
	t.Setenv("GITHUB_TOKEN", canary)
	m := newModelServer(t)
	url := m.srv.URL + "/v1"
	t.Setenv("OPENAI_BASE_URL", url)
	src := strings.NewReplacer("URL", url, "TURNS", "2", "BUDGET", "", "SANDGATE_TEST_MODEL_KEY", "GITHUB_TOKEN").Replace(agentBlueprint)
	keyOnly := strings.Replace(src, "    base_url: "+url+"\n", "", 1)
	repo := nodetest.SeedRepo(t)
	h := nodetest.NewHarness(t, repo)

	_, err := h.RT.Registry.Parse("agent.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "agent.yaml:11:15: nodes.implement.base_url: the blueprint would send a credential to "+url) {
		t.Fatalf("load: %v", err)
	}
	_, err = h.RT.Registry.Parse("agent.yaml", []byte(keyOnly))
	if err == nil || !strings.Contains(err.Error(), "agent.yaml:11:18: nodes.implement.api_key_env: the blueprint picks GITHUB_TOKEN") {
		t.Fatalf("load key only: %v", err)
	}
	// A validator that does not know the credential fields stands for any
	// path that skips the loader's check.
	lax := nodes.Types()
	ag := lax["agent"]
	ag.Fields = maps.Clone(ag.Fields)
	for k, f := range ag.Fields {
		f.Endpoint, f.CredentialEnv = false, false
		ag.Fields[k] = f
	}
	lax["agent"] = ag
	for _, s := range []string{src, keyOnly} {
		bp, err := blueprint.Parse("agent.yaml", []byte(s), blueprint.WithTypes(lax))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := h.RT.Run(context.Background(), bp, runtime.RunOptions{Inputs: map[string]any{"task": "x"}, Workspace: repo})
		if err == nil || sum != nil || !strings.Contains(err.Error(), "nodes.implement: ") {
			t.Fatalf("run of a blueprint that skipped the loader: %v %v", sum, err)
		}
	}
	m.mu.Lock()
	seen := len(m.requests)
	m.mu.Unlock()
	if seen != 0 {
		t.Fatalf("the model server got %d requests (auth %v)", seen, m.auth)
	}

	sum := agentHarness(t, repo, m).Run(t, src, map[string]any{"task": "x"})
	m.mu.Lock()
	auth := strings.Join(m.auth, ",")
	m.mu.Unlock()
	if !strings.Contains(auth, "Bearer "+canary) {
		t.Fatalf("control: the allowed endpoint never got the key: %q", auth)
	}
	filepath.WalkDir(sum.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if nodetest.FileHolds(p, canary) {
				t.Errorf("%s holds the agent's key", p)
			}
		}
		return nil
	})
}

// TestTranscriptShowsTheConversationWithoutCredentials: the agent cats a
// file of the repository that holds the harness's model key. The
// transcript records what the model was told (the task, once) and the
// tool result, but never the key; each request records only the messages
// added since the one before, so the conversation can be rebuilt from it.
func TestTranscriptShowsTheConversationWithoutCredentials(t *testing.T) {
	const key = "sk-test-key" // agentRun's SANDGATE_TEST_MODEL_KEY
	m := newModelServer(t,
		call("run", `{"command":"cat notes.txt"}`),
		call("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		call("finish", `{"summary":"Add now adds."}`))
	t.Setenv("SANDGATE_TEST_MODEL_KEY", key)
	repo := nodetest.SeedRepo(t)
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("deploy token: "+key+" (rotate monthly)\n"), 0o644)
	nodetest.Run(t, repo, "git", "add", ".")
	nodetest.Run(t, repo, "git", "-c", "user.name=d", "-c", "user.email=d@d", "commit", "-q", "-m", "notes")
	src := strings.NewReplacer("URL", m.srv.URL+"/v1", "TURNS", "10", "BUDGET", "").Replace(agentBlueprint)
	sum := agentHarness(t, repo, m).Run(t, src, map[string]any{"task": "make Add add"})
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("%s (%s)", sum.Status, sum.Reason)
	}
	text := transcriptText(t, sum)
	if strings.Contains(text, key) {
		t.Fatalf("the model key is in the transcript:\n%s", text)
	}
	if !strings.Contains(text, "deploy token: [redacted SANDGATE_TEST_MODEL_KEY] (rotate monthly)") {
		t.Fatalf("the tool result is not in the transcript:\n%s", text)
	}
	if n := strings.Count(text, "Task: make Add add"); n != 1 {
		t.Fatalf("the task appears %d times, want once:\n%s", n, text)
	}
	// Rebuild the conversation from the transcript and compare it with
	// what the model server received for its last request.
	var rebuilt []any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var e struct {
			Kind string         `json:"kind"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case "request":
			if int(e.Data["from"].(float64)) != len(rebuilt) {
				t.Fatalf("request from %v, rebuilt %d messages", e.Data["from"], len(rebuilt))
			}
			rebuilt = append(rebuilt, e.Data["messages"].([]any)...)
		case "completion":
			rebuilt = append(rebuilt, e.Data["message"])
		}
	}
	last := m.requests[len(m.requests)-1]["messages"].([]any)
	got, _ := json.Marshal(rebuilt[:len(last)])
	want, _ := json.Marshal(last)
	if !strings.Contains(string(got), "deploy token") || string(got) != string(want) {
		t.Fatalf("rebuilt conversation differs from what the model saw:\n got %s\nwant %s", got, want)
	}
}
