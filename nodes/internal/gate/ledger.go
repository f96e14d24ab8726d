package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// Ledger is the run's verdict ledger: the latest verdict of every gate
// node, each tied to the change it judged, kept in memory and written
// through to the run's verify.json. Promotion reads nothing else.
type Ledger struct {
	runDir string
	// redact removes the harness's credentials from verify.json.
	redact *secrets.Redactor
	// required are the gate nodes promotion waits for.
	required []string

	mu    sync.Mutex
	gates map[string]verdict.GateResult
	// judging maps a gate node running now to the tree it judges.
	judging map[string]string
}

// ServiceLedger is the Input.Services key of the run's *Ledger.
var ServiceLedger = runtime.NewServiceKey[*Ledger]("sandgate.verdicts")

// NewLedger is the verdict ledger of the run in runDir whose blueprint is
// bp. A resumed run starts from the verdicts so far, so a promotion node
// cut off by the crash (a review waiting for people) can run again. Each
// stays tied to the change it judged by its fingerprint, and the run
// directory is the harness's, outside the box.
func NewLedger(runDir string, redact *secrets.Redactor, bp *blueprint.Blueprint, resume bool) (*Ledger, error) {
	l := &Ledger{runDir: runDir, redact: redact, required: requiredGates(bp)}
	if !resume {
		return l, nil
	}
	return l, l.Reload()
}

// Reload reads the run's verify.json again: a run moved to this host has
// had its recorded verdicts written back (promote.PutRecords). Each stays
// tied to the fingerprint of the change it judged, which the rebuilt
// workspace must match for promotion to use it.
func (l *Ledger) Reload() error {
	b, err := os.ReadFile(filepath.Join(l.runDir, "verify.json"))
	if err != nil {
		return nil
	}
	var v verdict.Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(l.runDir, "verify.json"), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gates = v.Gates
	return nil
}

// LedgerOf fetches the run's verdict ledger from a node's input.
func LedgerOf(in *runtime.Input) (*Ledger, error) {
	l, ok := ServiceLedger.Get(in)
	if !ok || l == nil {
		return nil, errors.New("no verdict ledger: the runtime was built without nodes.Environment")
	}
	return l, nil
}

// record stores a gate node's result and rewrites the run's verify.json;
// it returns the JSON of this single gate attempt for the attempt directory.
func (l *Ledger) record(node string, r verdict.GateResult) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gates == nil {
		l.gates = map[string]verdict.GateResult{}
	}
	l.gates[node] = r
	all := verdict.JSON(l.gates)
	if err := atomicfile.Write(filepath.Join(l.runDir, "verify.json"), l.redact.JSON(all)); err != nil {
		return nil, err
	}
	return verdict.JSON(map[string]verdict.GateResult{node: r}), nil
}

// judge notes the tree a gate node judges, until done: its verdicts name
// it (see recordAttempt).
func (l *Ledger) judge(node, tree string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.judging == nil {
		l.judging = map[string]string{}
	}
	l.judging[node] = tree
}

// done forgets the tree a gate node judged: it has ended.
func (l *Ledger) done(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.judging, node)
}

// recordAttempt records r as the node's verdict and writes the attempt's
// verify.json. A verdict on the change names the tree the gate judged.
func (l *Ledger) recordAttempt(in *runtime.Input, r verdict.GateResult) error {
	l.mu.Lock()
	if tree, ok := l.judging[in.NodeID]; ok && r.Fingerprint != verdict.AnyChange {
		r.Tree = tree
	}
	l.mu.Unlock()
	one, err := l.record(in.NodeID, r)
	if err != nil {
		return err
	}
	return in.WriteFile("verify.json", one)
}

// latest is a node's latest verdict.
func (l *Ledger) latest(node string) (verdict.GateResult, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.gates[node]
	return g, ok
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

// RequirePassed is the check promotion nodes make before anything leaves:
// every gate node the blueprint puts before promotion, and every gate node
// that ran, has a latest verdict that passed on the change as it is now.
// It returns that change, so the caller promotes exactly what was checked.
// Callers hold the box exclusively (quietNode), so the change cannot move
// between this check and the commit.
func (l *Ledger) RequirePassed(w *workspace.Workspace) ([]sandbox.Change, error) {
	changes, err := w.Changes()
	if err != nil {
		return nil, err
	}
	fp, err := w.FingerprintOf(changes)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	names := l.sortedNodes()
	if len(names) == 0 {
		return nil, fmt.Errorf("no gate has judged this change: promotion needs a passing verdict")
	}
	var problems []string
	for _, n := range names {
		g, ran := l.gates[n]
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

// RequireTree is the check a promotion makes on the tree it commits or
// sends: every gate verdict that names a tree (every verdict on the change
// since gates judge in boxes of their own) names this one. With the
// fingerprint checks of RequirePassed it means the commit holds exactly
// the bytes the gates judged.
func (l *Ledger) RequireTree(tree string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	for _, n := range l.sortedNodes() {
		g, ok := l.gates[n]
		if ok && g.Tree != "" && g.Fingerprint != verdict.AnyChange && g.Tree != tree {
			problems = append(problems, fmt.Sprintf("gate %s judged tree %s", n, shortHash(g.Tree)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the commit would hold tree %s, which no gate judged: %s", shortHash(tree), strings.Join(problems, "; "))
	}
	return nil
}

// sortedNodes are the gates promotion waits for and the gates that ran,
// sorted; l.mu is held.
func (l *Ledger) sortedNodes() []string {
	nodes := map[string]bool{}
	for _, n := range l.required {
		nodes[n] = true
	}
	for n := range l.gates {
		nodes[n] = true
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func shortHash(h string) string { return h[:min(len(h), 12)] }
