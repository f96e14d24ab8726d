package verdict_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/sandgate/sandgate/nodes/verdict"
)

// TestJSONSummarizesByKind: a kind passes only when every node of that
// kind passed, test counts add up across test nodes, and the run passes
// only when every gate did (and at least one judged).
func TestJSONSummarizesByKind(t *testing.T) {
	cases := []struct {
		name  string
		gates map[string]verdict.GateResult
		want  map[string]any
	}{
		{"none", nil, map[string]any{"pass": false, "duration_ms": 0.0}},
		{"one lint fails", map[string]verdict.GateResult{
			"vet":   {Kind: "lint", Pass: true, DurationMS: 10},
			"style": {Kind: "lint", Pass: false, DurationMS: 5},
		}, map[string]any{"lint": "fail", "pass": false, "duration_ms": 15.0}},
		{"tests add up", map[string]verdict.GateResult{
			"unit": {Kind: "tests", Pass: true, Tests: &verdict.TestCounts{Passed: 3, Skipped: 1}},
			"e2e":  {Kind: "tests", Pass: true, Tests: &verdict.TestCounts{Passed: 2}},
			"x":    {Pass: true},
		}, map[string]any{"tests": map[string]any{"passed": 5.0, "failed": 0.0, "skipped": 1.0, "pass": true}, "x": "pass", "pass": true, "duration_ms": 0.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got map[string]any
			if err := json.Unmarshal(verdict.JSON(c.gates), &got); err != nil {
				t.Fatal(err)
			}
			delete(got, "gates")
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestRowsReadsVerify: rows come sorted by node, with the test counts,
// the reason on one line and the details by key; what is not a verdict
// gives none.
func TestRowsReadsVerify(t *testing.T) {
	b := verdict.JSON(map[string]verdict.GateResult{
		"tests": {Kind: "tests", Pass: false, Reason: "1 failed,\n 0 problem(s)", Tests: &verdict.TestCounts{Passed: 2, Failed: 1}},
		"mine":  {Kind: "no_todo", Pass: true, Details: map[string]any{"z": 1, "a": []string{"x"}}},
	})
	want := []verdict.GateRow{
		{Gate: "mine", Kind: "no_todo", Pass: true, Verdict: "pass", Details: `a=["x"]; z=1`},
		{Gate: "tests", Kind: "tests", Verdict: "fail", Details: "2 passed, 1 failed, 0 skipped; 1 failed, 0 problem(s)"},
	}
	if got := verdict.Rows(b); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got := verdict.Rows([]byte("not json")); got != nil {
		t.Fatalf("rows of a broken file: %+v", got)
	}
}

func ExampleJSON() {
	b := verdict.JSON(map[string]verdict.GateResult{"lint": {Kind: "lint", Pass: true, DurationMS: 12, Fingerprint: "ab12"}})
	fmt.Print(string(b))
	// Output:
	// {"duration_ms":12,"gates":{"lint":{"node":"","kind":"lint","pass":true,"duration_ms":12,"fingerprint":"ab12"}},"lint":"pass","pass":true}
}
