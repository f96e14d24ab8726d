package agent_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
)

// breakingProvider spends $0.205 on every odd call (a tool call) and
// fails every even one, as a flaky endpoint does after billing a turn.
type breakingProvider struct {
	mu    sync.Mutex
	calls int
	usage agent.Usage
}

func (p *breakingProvider) Chat(ctx context.Context, _ agent.Request) (*agent.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.calls%2 == 0 {
		return nil, errors.New("endpoint went away")
	}
	return &agent.Response{ID: "p", Message: callTurn("read_file", `{"path":"calc.go"}`), Usage: p.usage}, nil
}

// TestCostBudgetCountsBrokenAttempts attacks budget.cost with attempts
// that break after spending: their cost must still count, so the retries
// stop once the budget is gone instead of each starting from zero.
func TestCostBudgetCountsBrokenAttempts(t *testing.T) {
	p := &breakingProvider{usage: agent.Usage{Input: 100_000, Output: 10_000, Cached: 50_000}}
	src := strings.Replace(providerBlueprint, "start: implement", "budget: {cost: 0.5}\nstart: implement", 1)
	src = strings.Replace(src, "model: house-model,", "model: house-model, retry: {max: 8, backoff: 1ms},", 1)
	sum := costHarness(t, p).Run(t, src, nil)
	spent := float64((p.calls+1)/2) * 0.205
	if spent > 0.5+0.205+1e-9 {
		t.Fatalf("the model was billed $%.3f over %d calls against a $0.50 budget (the run counted $%.3f)", spent, p.calls, sum.Cost)
	}
	if math.Abs(sum.Cost-spent) > 1e-9 {
		t.Fatalf("the run counted $%.3f, the model billed $%.3f", sum.Cost, spent)
	}
	if sum.Status != runtime.StatusHandedOff {
		t.Fatalf("%s (%s), want a hand-off over the budget", sum.Status, sum.Reason)
	}
}

// TestCostBudgetWithoutUsage attacks budget.cost with an endpoint that
// reports no usage (or negative counts): such calls must not be free, or
// the budget never stops the agent.
func TestCostBudgetWithoutUsage(t *testing.T) {
	for _, u := range []agent.Usage{{}, {Input: -1_000_000, Output: -1_000_000}} {
		p := &pricedProvider{recordingProvider: recordingProvider{}}
		turns := make([]agent.Message, 400)
		for i := range turns {
			turns[i] = callTurn("read_file", `{"path":"calc.go"}`)
		}
		p.turns = turns
		q := &usageOverride{Model: p, usage: u}
		src := strings.Replace(providerBlueprint, "start: implement", "budget: {cost: 0.1}\nstart: implement", 1)
		src = strings.Replace(src, "model: house-model,", "model: house-model, max_turns: 400,", 1)
		sum := costHarness(t, q).Run(t, src, nil)
		if sum.Cost <= 0 || p.calls >= 400 {
			t.Fatalf("usage %+v: %d calls made, the run counted $%v against a $0.10 budget (%s: %s)", u, p.calls, sum.Cost, sum.Status, sum.Reason)
		}
	}
}

// usageOverride replaces the usage a model reports.
type usageOverride struct {
	agent.Model
	usage agent.Usage
}

func (u *usageOverride) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	resp, err := u.Model.Chat(ctx, req)
	if resp != nil {
		resp.Usage = u.usage
	}
	return resp, err
}

var _ = nodes.Options{}

// loopProvider bills every call the same and never finishes: only a
// budget stops the agents it serves. Calls from parallel agents are
// counted together.
type loopProvider struct {
	mu    sync.Mutex
	calls int
	usage agent.Usage
}

func (p *loopProvider) Chat(ctx context.Context, _ agent.Request) (*agent.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return &agent.Response{ID: "l", Message: callTurn("read_file", `{"path":"calc.go"}`), Usage: p.usage}, nil
}

// TestCostBudgetParallelAgents attacks budget.cost with two agents running
// side by side: each must see the other's calls as they happen, or both
// spend the whole budget (twice it in all) before either finishes.
func TestCostBudgetParallelAgents(t *testing.T) {
	p := &loopProvider{usage: agent.Usage{Input: 100_000}} // $0.20 a call
	src := `version: 1
name: pair
budget: {cost: 1.0}
start: fork
nodes:
  fork: {type: shell, run: "true", next: [a, b]}
  a: {type: agent, prompt: fix calc, model: house-model, max_turns: 100, next: join}
  b: {type: agent, prompt: fix calc too, model: house-model, max_turns: 100, next: join}
  join: {type: shell, run: "true", needs: [a, b], next: done}
  done: {type: succeed}
`
	sum := costHarness(t, p).Run(t, src, nil)
	billed := float64(p.calls) * 0.20
	// Each agent may overshoot by the one call it had already started.
	if billed > 1.0+2*0.20+1e-9 {
		t.Fatalf("two parallel agents were billed $%.2f over %d calls against a $1.00 budget (run counted $%.2f)", billed, p.calls, sum.Cost)
	}
	if sum.Status != runtime.StatusHandedOff {
		t.Fatalf("%s (%s), want a hand-off over the budget", sum.Status, sum.Reason)
	}
}
