package ci_test

import (
	"path/filepath"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// TestAttackCICleanBoxSharesNothing: the agent's box writes into the
// copy-on-write Go build cache (a planted entry, and go test's own
// cached results), its home and /tmp, before the commit. The
// clean-checkout CI box is built over the same host caches; if it saw
// any of that, a poisoned cache entry or cached PASS from the run's box
// could stand in for a clean build. CI fails if a single mark is there.
func TestAttackCICleanBoxSharesNothing(t *testing.T) {
	plant := `sed -i 's/a - b/a + b/' calc.go && go test ./... >/dev/null && ` +
		`c=$(go env GOCACHE) && echo poisoned > $c/sg-mark && mkdir -p $c/ff && echo poisoned > $c/ff/sg-mark-d && ` +
		`echo poisoned > $HOME/sg-mark && echo poisoned > /tmp/sg-mark && ls $c/ff/sg-mark-d`
	check := `"c=$(go env GOCACHE); for f in $c/sg-mark $c/ff/sg-mark-d $HOME/sg-mark /tmp/sg-mark; do test -e $f && { echo seen $f; exit 3; }; done; go test ./... 2>&1 | grep -q cached && { echo cached result; exit 4; }; exit 0"`
	repo := nodetest.SeedRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "init", "-q", "--bare", bare)
	src := ciSource(bare, "test", plant, check)
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	// The plant goes by next, taken whatever its outcome: a plant that
	// failed (its last command checks a mark is there) would leave CI
	// nothing to see, and the test would pass blind.
	if p := nodetest.LastAttempt(sum, "fix"); p.Outcome != runtime.OutcomePass {
		t.Fatalf("the plant failed, the attack is blind: %s\n%s", p.Outcome, p.Feedback)
	}
	var ev *runtime.Event
	for _, e := range nodetest.ReadEvents(t, sum.Dir) {
		if e.Type == runtime.EvNodeFinished && e.Node == "ci" {
			ev = &e
		}
	}
	if ev == nil {
		t.Fatalf("ci never ran: run %s %q", sum.Status, sum.Reason)
	}
	if ev.Outcome != runtime.OutcomePass {
		t.Fatalf("the clean-checkout box saw the run's box: %s\n%s", ev.Outcome, ev.Feedback)
	}
}
