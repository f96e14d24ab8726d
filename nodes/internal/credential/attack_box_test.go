package credential_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// reach is an attack from inside the box after the push and the review
// minted their tokens: it reads the app's private key and the run's
// sealed ledger at their host paths, looks for a descriptor of any
// process it can see that leads to either, and greps what it can reach
// for the key: process environments and command lines, the workspace,
// /tmp and home for any PEM private key, and the host's Go caches (in
// home, tens of GB, which do hold PEM literals of Go code) for the app
// key's first line in the files written since SINCE, the test's start:
// the key file is younger. That line is the DER header and the top of
// the public modulus, so the script may name it. Reading a workspace
// file is the control of the reads, a file it plants in the build
// cache's copy holding @CTL@ the control of the caches' scan. The script
// never spells the PEM phrase itself, so its own command line, in
// /proc, does not match.
const reach = `cat calc.go >/dev/null || { echo "the attack is blind"; exit 2; }
      for f in @KEY@ @RUNS@/*/credentials.jsonl @RUNS@; do
        if head -c1 "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then echo "REACHED $f"; exit 1; fi
      done
      for l in /proc/[0-9]*/fd/*; do
        case "$(readlink "$l" 2>/dev/null)" in *credentials.jsonl*|*.pem*) echo "FD $l"; exit 1;; esac
      done
      if cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -aq "PRIVATE[ ]KEY"; then echo "KEY IN /proc"; exit 1; fi
      gb="$HOME/.cache/go-build" mod="$HOME/go/pkg/mod"
      pem=$( { grep -rla "PRIVATE[ ]KEY" . /tmp; find "$HOME" -path "$gb" -prune -o -path "$mod" -prune -o -type f -print0 | xargs -0r grep -la "PRIVATE[ ]KEY"; } 2>/dev/null )
      [ -z "$pem" ] || { echo "KEY IN FILES: $pem"; exit 1; }
      printf '%s\n' "@CTL@" > "$gb/control"
      touch -d @SINCE /tmp/since
      found=$(find "$gb" "$mod" -type f -newer /tmp/since -print0 2>/dev/null | xargs -0r grep -aohF -e "@CTL@" -e "@KEYLINE@" 2>/dev/null)
      echo "$found" | grep -qF "@CTL@" || { echo "the scan of the caches is blind"; exit 2; }
      if echo "$found" | grep -qF "@KEYLINE@"; then echo "KEY IN THE GO CACHES"; exit 1; fi`

// TestAttackBoxReachesKeyOrLedger: nothing of the app's private key or
// the run's credential ledger is within the box's reach, by path, by a
// descriptor or by content.
func TestAttackBoxReachesKeyOrLedger(t *testing.T) {
	a := newAppRun(t, nil, "AFTER", sinceNow(reach))
	key := regexp.MustCompile(`key_file: ([^,]+),`).FindStringSubmatch(a.src)[1]
	pem, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	a.src = strings.NewReplacer("@KEY@", key, "@RUNS@", a.h.RT.RunsDir, "@KEYLINE@", strings.Split(string(pem), "\n")[1],
		"@CTL@", "sandgate-control-"+strings.Repeat("C", 48)).Replace(a.src)
	sum := a.h.Run(t, a.src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatal(attackFailed(t, sum))
	}
	if len(a.gh.Minted()) != 2 {
		t.Fatalf("minted %d tokens before the attack", len(a.gh.Minted()))
	}
}
