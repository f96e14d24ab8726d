package nodes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// Verdict is the latest result of every gate in a run, each tied to the
// exact change it judged.
type Verdict struct {
	Gates map[string]GateResult `json:"gates"`
}

// GateResult is one gate's latest judgement.
type GateResult struct {
	Node        string      `json:"node"`
	Pass        bool        `json:"pass"`
	Reason      string      `json:"reason,omitempty"`
	Tests       *TestCounts `json:"tests,omitempty"`
	DurationMS  int64       `json:"duration_ms"`
	Fingerprint string      `json:"fingerprint"`
}

// TestCounts are what a test gate counted.
type TestCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// record stores a gate's result and rewrites the run's verify.json; it
// returns the JSON of this single gate attempt for the attempt directory.
func (w *Workspace) record(gate string, r GateResult) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.verdict.Gates == nil {
		w.verdict.Gates = map[string]GateResult{}
	}
	w.verdict.Gates[gate] = r
	all := verifyJSON(w.verdict.Gates)
	if err := writeFileAtomic(filepath.Join(w.RunDir, "verify.json"), all); err != nil {
		return nil, err
	}
	return verifyJSON(map[string]GateResult{gate: r}), nil
}

// verifyJSON renders gates in the verdict format:
// {"lint":"pass","tests":{"passed":12,"failed":0},"duration_ms":4200,...}.
func verifyJSON(gates map[string]GateResult) []byte {
	out := map[string]any{}
	var total int64
	pass := len(gates) > 0
	for name, g := range gates {
		total += g.DurationMS
		pass = pass && g.Pass
		if g.Tests != nil {
			out[name] = map[string]any{"passed": g.Tests.Passed, "failed": g.Tests.Failed, "skipped": g.Tests.Skipped, "pass": g.Pass}
		} else {
			out[name] = verdictWord(g.Pass)
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

// requirePassed is the check promotion nodes make before anything leaves:
// at least one gate ran, every gate's latest result passed, and every gate
// judged the change as it is now. It returns that change, so the caller
// promotes exactly what was checked.
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
	if len(w.verdict.Gates) == 0 {
		return nil, fmt.Errorf("no gate has judged this change: promotion needs a passing verdict")
	}
	var problems []string
	names := make([]string, 0, len(w.verdict.Gates))
	for n := range w.verdict.Gates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := w.verdict.Gates[n]
		switch {
		case !g.Pass:
			problems = append(problems, fmt.Sprintf("%s failed (%s)", n, g.Reason))
		case g.Fingerprint != anyChange && g.Fingerprint != fp:
			problems = append(problems, fmt.Sprintf("%s judged an earlier version of the change", n))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the latest verdict does not allow promotion: %s", strings.Join(problems, "; "))
	}
	return changes, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeJSONLine(f *os.File, v any) {
	b, _ := json.Marshal(v)
	_, _ = f.Write(append(b, '\n'))
}
