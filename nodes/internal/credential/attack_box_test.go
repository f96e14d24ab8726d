package credential_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// reach is an attack from inside the box after the push and the review
// minted their tokens: it reads the app's private key and the run's
// sealed ledger at their host paths, looks for a descriptor of any
// process it can see that leads to either, and greps what it can reach
// (process environments and command lines, the workspace, /tmp, home)
// for a private key. Reading a workspace file is its control.
const reach = `cat calc.go >/dev/null || { echo "the attack is blind"; exit 2; }
      for f in @KEY@ @RUNS@/*/credentials.jsonl @RUNS@; do
        if head -c1 "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then echo "REACHED $f"; exit 1; fi
      done
      for l in /proc/[0-9]*/fd/*; do
        case "$(readlink "$l" 2>/dev/null)" in *credentials.jsonl*|*.pem*) echo "FD $l"; exit 1;; esac
      done
      if cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -aq "PRIVATE KEY"; then echo "KEY IN /proc"; exit 1; fi
      if grep -rlaq "PRIVATE KEY" . /tmp "$HOME" 2>/dev/null; then echo "KEY IN FILES"; exit 1; fi`

// TestAttackBoxReachesKeyOrLedger: nothing of the app's private key or
// the run's credential ledger is within the box's reach, by path, by a
// descriptor or by content.
func TestAttackBoxReachesKeyOrLedger(t *testing.T) {
	a := newAppRun(t, nil, "AFTER", reach)
	key := regexp.MustCompile(`key_file: ([^,]+),`).FindStringSubmatch(a.src)[1]
	a.src = strings.NewReplacer("@KEY@", key, "@RUNS@", a.h.RT.RunsDir).Replace(a.src)
	sum := a.h.Run(t, a.src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s", sum.Status, sum.Reason)
	}
	if len(a.gh.Minted()) != 2 {
		t.Fatalf("minted %d tokens before the attack", len(a.gh.Minted()))
	}
}
