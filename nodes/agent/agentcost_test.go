package agent_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// pricedProvider reports 100k input tokens (half cached) and 10k output
// per call: $0.205 per call at housePrice.
type pricedProvider struct {
	recordingProvider
	mu    sync.Mutex
	calls int
}

func (p *pricedProvider) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	resp, err := p.recordingProvider.Chat(ctx, req)
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	resp.Usage = agent.Usage{Input: 100_000, Output: 10_000, Cached: 50_000}
	return resp, err
}

var housePrice = cost.Table{"house-model": {Input: 2, Output: 8, CachedInput: 0.5}}

func costTurns() []agent.Message {
	return []agent.Message{
		callTurn("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		callTurn("read_file", `{"path":"calc.go"}`),
		callTurn("finish", `{"summary":"fixed"}`)}
}

func costHarness(t *testing.T, p agent.Model) *nodetest.Harness {
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	h.RT.Registry = nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Provider: p, Prices: housePrice}})
	return h
}

// TestAgentCost: each call is priced with cached input at its own rate;
// the attempt's outputs, the journal and run.json carry tokens and cost.
func TestAgentCost(t *testing.T) {
	p := &pricedProvider{recordingProvider: recordingProvider{turns: costTurns()}}
	sum := costHarness(t, p).Run(t, providerBlueprint, nil)
	if sum.Status != runtime.StatusSucceeded || math.Abs(sum.Cost-0.615) > 1e-9 {
		t.Fatalf("%s (%s): cost %v, want 0.615", sum.Status, sum.Reason, sum.Cost)
	}
	out := sum.Attempts[0].Outputs
	if out["tokens_cached"] != float64(150_000) || out["model"] != "house-model" || math.Abs(out["cost"].(float64)-0.615) > 1e-9 {
		t.Fatalf("agent outputs %v", out)
	}
}

// TestAgentCostBudgetStopsBeforeTheCall: with $0.43 and $0.41 spent, the
// third call (estimated above $0.02) is never made: the agent hands off.
func TestAgentCostBudgetStopsBeforeTheCall(t *testing.T) {
	p := &pricedProvider{recordingProvider: recordingProvider{turns: costTurns()}}
	src := strings.Replace(providerBlueprint, "start: implement", "budget: {cost: 0.43}\nstart: implement", 1)
	sum := costHarness(t, p).Run(t, src, nil)
	if p.calls != 2 {
		t.Fatalf("the model was called %d times, want 2: the third would exceed the budget", p.calls)
	}
	if sum.Status != runtime.StatusHandedOff || !strings.Contains(sum.Reason, "cost budget: next call would exceed") {
		t.Fatalf("%s/%s: %s", sum.Status, sum.Kind, sum.Reason)
	}
	if math.Abs(sum.Cost-0.41) > 1e-9 {
		t.Fatalf("cost %v, want 0.41", sum.Cost)
	}
}

// TestCostBudgetNeedsPrices: a cost budget over an unpriced model is
// refused before the run (CheckPrices, with the budget's position) and,
// for embedders who skip that, by the node before any call.
func TestCostBudgetNeedsPrices(t *testing.T) {
	src := strings.Replace(providerBlueprint, "start: implement", "budget: {cost: 1}\nstart: implement", 1)
	bp, err := blueprint.Parse("test.yaml", []byte(src), blueprint.WithTypes(nodes.Types()))
	if err != nil {
		t.Fatal(err)
	}
	err = agent.CheckPrices(bp, agent.Options{})
	if err == nil || !strings.Contains(err.Error(), "test.yaml:3:9: budget.cost is set but model house-model (node implement) has no price") {
		t.Fatalf("CheckPrices: %v", err)
	}
	if err := agent.CheckPrices(bp, agent.Options{Prices: housePrice}); err != nil {
		t.Fatalf("priced: %v", err)
	}
	p := &pricedProvider{}
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	h.RT.Registry = nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Provider: p}})
	sum := h.Run(t, src, nil)
	if p.calls != 0 || sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "has no price") {
		t.Fatalf("%d calls, %s: %s", p.calls, sum.Status, sum.Reason)
	}
}
