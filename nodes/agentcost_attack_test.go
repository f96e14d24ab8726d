package nodes_test

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
	sum := costHarness(t, p).run(t, src, nil)
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
		sum := costHarness(t, q).run(t, src, nil)
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
