package blueprint_test

import (
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestBudgetAnswers: omitted means DefaultAnswers, an explicit 0 is kept
// (the run can never be answered), a number is taken as written.
func TestBudgetAnswers(t *testing.T) {
	cases := []struct {
		budget string
		want   int
	}{
		{"", blueprint.DefaultAnswers},
		{"budget: {max_node_runs: 5}\n", blueprint.DefaultAnswers},
		{"budget: {answers: 0}\n", 0},
		{"budget: {answers: 7}\n", 7},
	}
	for _, c := range cases {
		bp, err := blueprint.Parse("t.yaml", []byte(c.budget+minimal), blueprint.WithTypes(testTypes))
		if err != nil {
			t.Fatalf("%q: %v", c.budget, err)
		}
		if bp.Budget.Answers != c.want {
			t.Errorf("%q: answers %d, want %d", c.budget, bp.Budget.Answers, c.want)
		}
	}
}
