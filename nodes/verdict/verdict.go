package verdict

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Verdict is the latest result of every gate node in a run, each tied to
// the exact change it judged. It is keyed by node id: two lint nodes are
// two verdicts, and a passing one never hides a failing one.
type Verdict struct {
	Gates map[string]GateResult `json:"gates"`
}

// GateResult is one gate node's latest judgement.
type GateResult struct {
	Node string `json:"node"`
	// Kind is the summary key the node reports under: lint, tests, diff,
	// protect or parity for the built-in gates, the type name for others.
	Kind   string      `json:"kind"`
	Pass   bool        `json:"pass"`
	Reason string      `json:"reason,omitempty"`
	Tests  *TestCounts `json:"tests,omitempty"`
	// Details are a gate's own structured findings (runtime.Result.Details).
	Details     map[string]any `json:"details,omitempty"`
	DurationMS  int64          `json:"duration_ms"`
	Fingerprint string         `json:"fingerprint"`
	// Tree is the git tree the gate judged: the change as the commit
	// will hold it (ignored files left out), laid out in a box of its own.
	// git_commit commits no other tree. Empty for a gate whose verdict
	// does not depend on the change (AnyChange).
	Tree string `json:"tree,omitempty"`
}

// TestCounts are what a test gate counted.
type TestCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// AnyChange is the fingerprint of a gate whose verdict does not depend on
// the change (tool parity), so it stays valid when the code changes
// afterwards.
const AnyChange = "*"

// JSON renders gates in the verdict format, one summary key per kind
// and the nodes under "gates":
// {"lint":"pass","tests":{"passed":12,"failed":0},"duration_ms":4200,...}.
// A kind passes only when every node of that kind passed; test counts add
// up across test nodes.
func JSON(gates map[string]GateResult) []byte {
	out := map[string]any{}
	kindPass := map[string]bool{}
	tests := map[string]*TestCounts{}
	var total int64
	pass := len(gates) > 0
	for node, g := range gates {
		kind := g.Kind
		if kind == "" {
			kind = node
		}
		total += g.DurationMS
		pass = pass && g.Pass
		if p, seen := kindPass[kind]; !seen || p {
			kindPass[kind] = g.Pass
		}
		if g.Tests != nil {
			if tests[kind] == nil {
				tests[kind] = &TestCounts{}
			}
			t := tests[kind]
			t.Passed, t.Failed, t.Skipped = t.Passed+g.Tests.Passed, t.Failed+g.Tests.Failed, t.Skipped+g.Tests.Skipped
		}
	}
	for kind, p := range kindPass {
		if t := tests[kind]; t != nil {
			out[kind] = map[string]any{"passed": t.Passed, "failed": t.Failed, "skipped": t.Skipped, "pass": p}
		} else {
			out[kind] = Word(p)
		}
	}
	out["duration_ms"] = total
	out["pass"] = pass
	out["gates"] = gates
	b, _ := json.Marshal(out)
	return append(b, '\n')
}

// Word is "pass" or "fail".
func Word(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// GateRow is one gate's line in a verdict table.
type GateRow struct {
	Gate    string `json:"gate"`
	Kind    string `json:"kind"`
	Pass    bool   `json:"pass"`
	Verdict string `json:"verdict"`
	Details string `json:"details"`
}

// Rows reads verify.json's gates into rows, sorted by node id; nil when
// verify is not a verdict.
func Rows(verify []byte) []GateRow {
	var v struct {
		Gates map[string]GateResult `json:"gates"`
	}
	if json.Unmarshal(verify, &v) != nil {
		return nil
	}
	rows := make([]GateRow, 0, len(v.Gates))
	for node, g := range v.Gates {
		var details []string
		if t := g.Tests; t != nil {
			details = append(details, fmt.Sprintf("%d passed, %d failed, %d skipped", t.Passed, t.Failed, t.Skipped))
		}
		if g.Reason != "" {
			details = append(details, oneLine(g.Reason))
		}
		keys := make([]string, 0, len(g.Details))
		for k := range g.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b, _ := json.Marshal(g.Details[k])
			details = append(details, k+"="+string(b))
		}
		rows = append(rows, GateRow{Gate: node, Kind: g.Kind, Pass: g.Pass, Verdict: Word(g.Pass), Details: strings.Join(details, "; ")})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Gate < rows[j].Gate })
	return rows
}

// oneLine folds text onto one line and keeps it short, for a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
