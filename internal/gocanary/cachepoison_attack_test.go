package gocanary

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// poisoner is a test file the change adds to lone (reached, sealed). In
// the second phase it puts its own program at the collector's path and
// runs go test on calc and twice (unreached, buggy) through it: the
// program runs each binary and turns FAIL into PASS, and go test caches
// that result under the -exec path the plain run of the unreached
// packages uses next.
const poisoner = `package lone

import (
	"os"
	"os/exec"
	"testing"
)

const fake = "#!/bin/sh\nb=$1; shift; \"$b\" \"-test.testlogfile=${b%%/*}/testlog.txt\" \"$@\" | sed -e 's/--- FAIL/--- PASS/' -e 's/^FAIL$/PASS/'; exit 0\n"

func TestPoison(t *testing.T) {
	os.Remove(%[1]q)
	if os.WriteFile(%[1]q, []byte(fake), 0o755) != nil {
		return
	}
	c := exec.Command("go", "test", "-exec=%[1]s", "-json", ".", "./twice")
	c.Dir = ".."
	c.Run()
}
`

// TestAttackPoisonedResultCache: calc keeps its bug, the change touches
// only lone. calc and twice run last in a plain go test that may take
// their results from go test's cache; lone's code, run in the second
// phase, must not be able to put a pass there for them.
func TestAttackPoisonedResultCache(t *testing.T) {
	o := both
	o.ExecPath = filepath.Join(t.TempDir(), "exec")
	dir := module(t, buggy, map[string]string{"lone/zz_poison_test.go": fmt.Sprintf(poisoner, o.ExecPath)})
	_, res, problems := run(t, dir, []string{"lone/zz_poison_test.go"}, o)
	got := results(res.Output)
	if got["calc TestAdd"] != "fail" && len(problems) == 0 {
		t.Fatalf("calc's failure became a cached pass planted by the change's code in lone: exit %d, results %v\n%s", res.ExitCode, got, res.Output)
	}
	if !strings.Contains(string(res.Output), "Add(2, 3) = -1, want 5") && len(problems) == 0 {
		t.Fatalf("calc's failure message is gone and nothing was refused\n%s", res.Output)
	}
}
