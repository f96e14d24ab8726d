package integration

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// loopModel is an OpenAI-compatible endpoint on loopback that answers
// every call with a tool call and reports 100,000 input tokens ($0.20 at
// the test's price): the agents it serves never finish on their own.
type loopModel struct {
	mu    sync.Mutex
	calls int
}

func (m *loopModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "l", "object": "chat.completion", "model": "house-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant",
			"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": `{"path":"README"}`}}}}}},
		"usage": map[string]any{"prompt_tokens": 100_000, "completion_tokens": 0, "total_tokens": 100_000}})
}

// TestCostBudgetParallelAgents attacks budget.cost on Temporal as
// nodes/agent's test of the same name does locally: two agents run side by
// side as two activities of one run; each must see the other's calls as
// they happen, or both spend the whole budget before either finishes.
func TestCostBudgetParallelAgents(t *testing.T) {
	m := &loopModel{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	c := dial(t)
	reg := nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{BaseURL: srv.URL + "/v1", APIKeyEnv: "SANDGATE_TEST_KEY",
		Getenv: func(string) string { return "test-key" }, Prices: cost.Table{"house-model": {Input: 2, Output: 8}}}})
	serveHost(t, c, "spend", &temporal.Host{Name: "host-spend", Runtime: &runtime.Runtime{RunsDir: t.TempDir(), Registry: reg}, Prepare: runfixture.Sandboxed})
	src := `version: 1
name: pair
budget: {cost: 1.0, answers: 0}
start: fork
nodes:
  fork: {type: shell, run: "true", next: [a, b]}
  a: {type: agent, prompt: read the readme, model: house-model, max_turns: 100, next: join}
  b: {type: agent, prompt: read the readme too, model: house-model, max_turns: 100, next: join}
  join: {type: shell, run: "true", needs: [a, b], next: done}
  done: {type: succeed}
`
	st := result(t, start(t, c, "spend", src, temporal.RunInput{Repo: gitRepo(t)}))
	m.mu.Lock()
	billed := float64(m.calls) * 0.20
	m.mu.Unlock()
	// Each agent may overshoot by the one call it had already started.
	if billed > 1.0+2*0.20+1e-9 {
		t.Fatalf("two parallel agents were billed $%.2f against a $1.00 budget (%+v)", billed, st)
	}
	if st.Status != runtime.StatusHandedOff {
		t.Fatalf("%+v, want a hand-off over the budget", st)
	}
	// The record counts every call billed, the canceled agent's too.
	sum, err := runtime.Summarize(st.Dir)
	if err != nil || math.Abs(sum.Cost-billed) > 1e-9 {
		t.Fatalf("the run's record counts $%.2f, the model server billed $%.2f (%v)", sum.Cost, billed, err)
	}
	t.Logf("%d calls, $%.2f billed, $%.2f counted: %s", m.calls, billed, sum.Cost, st.Reason)
}
