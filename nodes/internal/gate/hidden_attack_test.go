package gate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// The agent replaces the directory a held-out test will land in with a
// symlink to a host directory. The harness copies the run's change into a
// seed directory on the host and writes the held-out tests into it as
// root: following the link would remove and write files in any host
// directory (and, through a cache directory the box reads, hand the
// held-out tests to the agent). The write must stay in the seed.
func TestAttackHiddenPlacementFollowsAgentSymlink(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	host := t.TempDir() // stands for /etc, /root/.ssh or the host's Go cache
	victim := filepath.Join(host, "calc_hidden_test.go")
	if err := os.WriteFile(victim, []byte("host file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hidden := t.TempDir()
	if err := os.MkdirAll(filepath.Join(hidden, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hidden, "sub", "calc_hidden_test.go"), []byte("package sub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `version: 1
name: hidden-link
start: plant
nodes:
  plant: {type: shell, run: "ln -s ` + host + ` sub", next: held}
  held:
    type: test
    run: go test -json ./...
    hidden: ` + nodetest.Quote(hidden) + `
    on_pass: done
    on_fail: done
  done: {type: succeed}
`
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	// plant goes by next, taken whatever its outcome: without the link
	// the held-out run does not pass either, and the test passed blind.
	if p := nodetest.LastAttempt(sum, "plant"); p.Outcome != runtime.OutcomePass {
		t.Fatalf("the link was not planted, the attack is blind: %s\n%s", p.Outcome, p.Feedback)
	}
	b, err := os.ReadFile(victim)
	if err != nil || string(b) != "host file\n" {
		t.Fatalf("the harness replaced a host file through the agent's symlink (run %s): %q, %v", sum.Status, b, err)
	}
	if entries, _ := os.ReadDir(host); len(entries) != 1 {
		t.Fatalf("the harness wrote into a host directory through the agent's symlink: %v", entries)
	}
	a := nodetest.LastAttempt(sum, "held")
	if a.Outcome == runtime.OutcomePass {
		t.Fatalf("held-out tests passed with their directory swapped for a link: %+v", a)
	}
	// Refused, not crashed: a panic also ends the attempt without a pass.
	if strings.Contains(a.Error, "panicked") {
		t.Fatalf("the harness crashed on the link instead of refusing it: %s", a.Error)
	}
}
