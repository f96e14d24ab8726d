package credential_test

import (
	"crypto/sha256"
	"encoding/hex"
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
// (process environments and command lines, the workspace, /tmp, and the
// files of home written since SINCE, the test's start: the key file is
// younger) for a private key. Of the files holding "PRIVATE KEY" (the
// host's Go caches hold some, from code with PEM literals) it hashes
// every 64-character base64 line: the key's first line's hash,
// @KEYSUM@, is a breach. The script never spells the phrase itself, so
// its own command line, in /proc, does not match. Reading a workspace file is the control of the
// reads; a key-shaped file it plants in the build cache's copy, whose
// line hashes to @CTLSUM@, is the control of the file scan.
const reach = `cat calc.go >/dev/null || { echo "the attack is blind"; exit 2; }
      for f in @KEY@ @RUNS@/*/credentials.jsonl @RUNS@; do
        if head -c1 "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then echo "REACHED $f"; exit 1; fi
      done
      for l in /proc/[0-9]*/fd/*; do
        case "$(readlink "$l" 2>/dev/null)" in *credentials.jsonl*|*.pem*) echo "FD $l"; exit 1;; esac
      done
      if cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -aq "PRIVATE[ ]KEY"; then echo "KEY IN /proc"; exit 1; fi
      printf -- '-----BEGIN CONTROL PRIVATE%sKEY-----\n%s\n' " " "@CTL@" > "$HOME/.cache/go-build/control"
      touch -d @SINCE /tmp/since
      sums=$( { grep -rla "PRIVATE[ ]KEY" . /tmp; find "$HOME" -type f -newer /tmp/since -print0 | xargs -0r grep -la "PRIVATE[ ]KEY"; } 2>/dev/null |
        while read -r f; do grep -aoE '[A-Za-z0-9+/]{64}' "$f" | while read -r l; do printf %s "$l" | sha256sum; done; done )
      echo "$sums" | grep -q @CTLSUM@ || { echo "the file scan is blind"; exit 2; }
      if echo "$sums" | grep -q @KEYSUM@; then echo "KEY IN FILES"; exit 1; fi`

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
	ctl := strings.Repeat("C", 64)
	a.src = strings.NewReplacer("@KEY@", key, "@RUNS@", a.h.RT.RunsDir, "@KEYSUM@", lineSum(strings.Split(string(pem), "\n")[1]),
		"@CTLSUM@", lineSum(ctl), "@CTL@", ctl).Replace(a.src)
	sum := a.h.Run(t, a.src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatal(attackFailed(t, sum))
	}
	if len(a.gh.Minted()) != 2 {
		t.Fatalf("minted %d tokens before the attack", len(a.gh.Minted()))
	}
}

// lineSum is sha256sum's hex digest of line.
func lineSum(line string) string {
	s := sha256.Sum256([]byte(line))
	return hex.EncodeToString(s[:])
}
