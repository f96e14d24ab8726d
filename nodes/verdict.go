package nodes

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// record stores a gate node's result and rewrites the run's verify.json;
// it returns the JSON of this single gate attempt for the attempt directory.
func (w *Workspace) record(node string, r verdict.GateResult) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verdict.Gates == nil {
		w.verdict.Gates = map[string]verdict.GateResult{}
	}
	w.verdict.Gates[node] = r
	all := verdict.JSON(w.verdict.Gates)
	if err := atomicfile.Write(filepath.Join(w.RunDir, "verify.json"), w.redact.JSON(all)); err != nil {
		return nil, err
	}
	return verdict.JSON(map[string]verdict.GateResult{node: r}), nil
}

// recordAttempt records r as the node's verdict and writes the attempt's
// verify.json.
func (w *Workspace) recordAttempt(in *runtime.Input, r verdict.GateResult) error {
	one, err := w.record(in.NodeID, r)
	if err != nil {
		return err
	}
	return in.WriteFile("verify.json", one)
}

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
		case g.Fingerprint != verdict.AnyChange && g.Fingerprint != fp:
			problems = append(problems, fmt.Sprintf("gate %s judged an earlier version of the change", n))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the latest verdict does not allow promotion: %s", strings.Join(problems, "; "))
	}
	return changes, nil
}
