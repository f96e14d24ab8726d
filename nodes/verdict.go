package nodes

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
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
}

// TestCounts are what a test gate counted.
type TestCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// record stores a gate node's result and rewrites the run's verify.json;
// it returns the JSON of this single gate attempt for the attempt directory.
func (w *Workspace) record(node string, r GateResult) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verdict.Gates == nil {
		w.verdict.Gates = map[string]GateResult{}
	}
	w.verdict.Gates[node] = r
	all := verifyJSON(w.verdict.Gates)
	if err := atomicfile.Write(filepath.Join(w.RunDir, "verify.json"), w.redact.JSON(all)); err != nil {
		return nil, err
	}
	return verifyJSON(map[string]GateResult{node: r}), nil
}

// recordAttempt records r as the node's verdict and writes the attempt's
// verify.json.
func (w *Workspace) recordAttempt(in *runtime.Input, r GateResult) error {
	one, err := w.record(in.NodeID, r)
	if err != nil {
		return err
	}
	return in.WriteFile("verify.json", one)
}

// verifyJSON renders gates in the verdict format, one summary key per kind
// and the nodes under "gates":
// {"lint":"pass","tests":{"passed":12,"failed":0},"duration_ms":4200,...}.
// A kind passes only when every node of that kind passed; test counts add
// up across test nodes.
func verifyJSON(gates map[string]GateResult) []byte {
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
			out[kind] = verdictWord(p)
		}
	}
	out["duration_ms"] = total
	out["pass"] = pass
	out["gates"] = gates
	b, _ := json.Marshal(out)
	return append(b, '\n')
}

func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// anyChange marks a gate whose verdict does not depend on the change
// (tool parity), so it stays valid when the code changes afterwards.
const anyChange = "*"

// requiredGates lists the gate nodes promotion waits for: every gate node
// (its type declares blueprint.NodeType.Gate, built in or not) from which a
// promotion node can be reached. A gate that only runs after
// the change has left (a post-push check) cannot hold it back.
func requiredGates(bp *blueprint.Blueprint) []string {
	into := map[string][]string{}
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		for _, e := range n.Edges {
			into[e.To] = append(into[e.To], id)
			if e.OnExhausted != "" {
				into[e.OnExhausted] = append(into[e.OnExhausted], id)
			}
		}
	}
	seen := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		for _, from := range into[id] {
			if !seen[from] {
				seen[from] = true
				walk(from)
			}
		}
	}
	for _, id := range bp.Order {
		if promoteKinds[bp.Nodes[id].Type] {
			walk(id)
		}
	}
	var out []string
	for _, id := range bp.Order {
		if seen[id] && bp.Nodes[id].Gate {
			out = append(out, id)
		}
	}
	return out
}

// requirePassed is the check promotion nodes make before anything leaves:
// every gate node the blueprint puts before promotion, and every gate node
// that ran, has a latest verdict that passed on the change as it is now.
// It returns that change, so the caller promotes exactly what was checked.
// Callers hold the box exclusively (quietNode), so the change cannot move
// between this check and the commit.
func (w *Workspace) requirePassed() ([]sandbox.Change, error) {
	changes, err := w.Changes()
	if err != nil {
		return nil, err
	}
	fp, err := w.fingerprint(changes)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	nodes := map[string]bool{}
	for _, n := range w.required {
		nodes[n] = true
	}
	for n := range w.verdict.Gates {
		nodes[n] = true
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("no gate has judged this change: promotion needs a passing verdict")
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	var problems []string
	for _, n := range names {
		g, ran := w.verdict.Gates[n]
		switch {
		case !ran:
			problems = append(problems, fmt.Sprintf("gate %s has not judged this change", n))
		case !g.Pass:
			problems = append(problems, fmt.Sprintf("gate %s failed (%s)", n, g.Reason))
		case g.Fingerprint != anyChange && g.Fingerprint != fp:
			problems = append(problems, fmt.Sprintf("gate %s judged an earlier version of the change", n))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the latest verdict does not allow promotion: %s", strings.Join(problems, "; "))
	}
	return changes, nil
}
