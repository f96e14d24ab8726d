package blueprint_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

func TestBudgetCost(t *testing.T) {
	const head = "version: 1\nname: c\nstart: a\nnodes:\n  a: {type: shell, run: \"true\", next: done}\n  done: {type: succeed}\n"
	cases := []struct {
		budget string
		want   float64
		err    string
	}{
		{"budget: {cost: 5.00}\n", 5, ""},
		{"budget: {cost: 2}\n", 2, ""},
		{"budget: {cost: 0}\n", 0, "c.yaml:7:16: budget.cost: must be more than 0"},
		{"budget: {cost: -1.5}\n", 0, "budget.cost: must be more than 0"},
		{"budget: {cost: five}\n", 0, "c.yaml:7:16: budget.cost: expected a number"},
	}
	for _, c := range cases {
		bp, err := blueprint.Parse("c.yaml", []byte(head+c.budget), blueprint.WithTypes(testTypes))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.budget, err, c.err)
			}
			continue
		}
		if err != nil || bp.Budget.Cost != c.want {
			t.Errorf("%q: cost %v (%v), want %v", c.budget, bp.Budget.Cost, err, c.want)
		}
	}
}

// run.cost is usable in edge conditions, as a number.
func TestRunCostExpression(t *testing.T) {
	src := "version: 1\nname: c\nstart: a\nnodes:\n  a:\n    type: shell\n    run: \"true\"\n    edges:\n      - {to: done, when: run.cost < 1.5}\n      - {to: stop}\n  done: {type: succeed}\n  stop: {type: fail}\n"
	bp, err := blueprint.Parse("c.yaml", []byte(src), blueprint.WithTypes(testTypes))
	if err != nil {
		t.Fatal(err)
	}
	when := bp.Nodes["a"].Edges[0].When
	for cost, want := range map[float64]bool{1.0: true, 2.0: false} {
		ok, err := when.Eval(&blueprint.Scope{Run: blueprint.RunInfo{Cost: cost, Elapsed: time.Second}})
		if err != nil || ok != want {
			t.Errorf("run.cost %v: %v %v, want %v", cost, ok, err, want)
		}
	}
}
