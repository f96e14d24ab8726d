package agent

import (
	"cmp"
	"fmt"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/runtime"
)

// assumedOutput is the output a call is assumed to produce when checking
// budget.cost before it: requests carry no output cap, so this is a
// generous guess at one turn's answer, not a bound.
const assumedOutput = 4096

// prices is the operator's table, or the shipped defaults.
func (o *Options) prices() cost.Table {
	if o.Prices != nil {
		return o.Prices
	}
	return cost.Defaults()
}

// priceName is the name a model is priced under: offline models by their
// kind ("script", "replay").
func priceName(model string) string {
	if offline(model) {
		return model[:len("script")] // "script:" and "replay:" are both 6 letters
	}
	return model
}

// CheckPrices fails when the blueprint sets budget.cost and an agent node's
// model has no price in the operator's table: its calls would count as
// free and the budget would never stop it. Call it before a run starts.
func CheckPrices(bp *blueprint.Blueprint, o Options) error {
	if bp.Budget.Cost <= 0 {
		return nil
	}
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		if n.Type != "agent" {
			continue
		}
		configured, _ := n.Config["model"].(string)
		model := cmp.Or(o.Model, configured, defaultModel)
		if _, ok := o.prices().Lookup(priceName(model)); !ok {
			return fmt.Errorf("%s:%d:%d: budget.cost is set but model %s (node %s) has no price: give one with --prices FILE or %s (YAML: %s: {input: USD per million tokens, output: ..., cached_input: ...})",
				bp.File, bp.Budget.Pos.Line, bp.Budget.Pos.Col, model, id, cost.EnvPrices, model)
		}
	}
	return nil
}

// spend keeps one attempt's token and money account.
type spend struct {
	price        cost.Price
	priced       bool
	in, out, hit int
	usd          float64
	// live is the run's running total (runtime.Input.Spend): parallel
	// agents see each other's calls before either has finished.
	live *runtime.Spend
}

// add counts one call's usage. A call always reads input, so a response
// reporting none (an endpoint or proxy that drops usage) or negative
// counts is charged what the call was estimated at: otherwise such calls
// would be free and budget.cost would never stop the agent.
func (s *spend) add(u Usage, req Request) {
	u.Output, u.Cached = max(u.Output, 0), max(u.Cached, 0)
	if u.Input <= 0 {
		u = Usage{Input: max(estimatedInput(req), 1), Output: max(u.Output, assumedOutput)}
	}
	s.in, s.out, s.hit = s.in+u.Input, s.out+u.Output, s.hit+u.Cached
	if s.priced {
		c := s.price.Cost(u.Input, u.Output, u.Cached)
		s.usd += c
		s.live.Add(c)
	}
}

// estimate is the rough price of the next call: a quarter of the
// characters sent (messages and tool declarations) as input tokens, plus
// assumedOutput output tokens, nothing cached.
func (s *spend) estimate(req Request) float64 {
	return s.price.Cost(estimatedInput(req), assumedOutput, 0)
}

// estimatedInput is a quarter of the characters a request sends.
func estimatedInput(req Request) int {
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content) + len(m.Role)
		for _, c := range m.ToolCalls {
			chars += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		chars += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return chars / 4
}

// overBudget says why the next call may not be made: what it would likely
// cost against what the run has left of budget.cost. Empty means go ahead.
func (s *spend) overBudget(in *runtime.Input, req Request) string {
	budget := in.Budget.Cost
	if budget <= 0 {
		return ""
	}
	var before float64
	if in.Scope != nil {
		before = in.Scope.Run.Cost
	}
	spent := before + s.usd
	if s.live != nil {
		spent = s.live.Total() // this attempt's calls and running siblings' too
	}
	left := budget - spent
	if est := s.estimate(req); est > left {
		return fmt.Sprintf("cost budget: next call would exceed (estimated $%.4f, $%.4f left of $%.2f)", est, max(left, 0), budget)
	}
	return ""
}
