package testgate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// gateChain runs prep and then each gate of gates (YAML bodies, as
// nodetest.GateRun takes them) as nodes g0, g1, … of one blueprint, each
// passing on to the next; the first that fails ends the run as failed.
// Gates do not change the workspace, so each judges the same change, in
// a judge box of its own, as a run of its own would: one run spares the
// others' harness, prep box and workspace set-up.
func gateChain(t *testing.T, repo, prep string, gates []string) *runtime.Summary {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nname: chain\nstart: prep\nnodes:\n  prep: {type: shell, run: " + nodetest.Quote(prep) + ", next: g0}\n")
	for i, g := range gates {
		next := fmt.Sprintf("g%d", i+1)
		if i == len(gates)-1 {
			next = "ok"
		}
		fmt.Fprintf(&b, "  g%d:\n%s    on_pass: %s\n    on_fail: no\n", i, nodetest.Indent(g), next)
	}
	b.WriteString("  ok: {type: succeed}\n  no: {type: fail, reason: gate failed}\n")
	return nodetest.NewHarness(t, repo).Run(t, b.String(), nil)
}
