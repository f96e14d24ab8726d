package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// checkoutRewrites is a change whose bytes pass their tests while a git
// checkout of the commit does not hold those bytes: the change's own
// .gitattributes asks git to expand $Id$ in calc.go on checkout, and the
// fix only holds while the keyword is unexpanded. The judge box lays out
// blob bytes, so it judges what no clone will hold.
const checkoutRewrites = `set -e
cd /work
printf 'calc.go ident\n' > .gitattributes
cat > calc.go <<'GO'
package calc

// id is the keyword git expands on checkout.
var id = "$Id$"

var op = func(a, b int) int {
	if len(id) == 4 {
		return a + b
	}
	return a - b
}

// Add returns the sum of a and b.
func Add(a, b int) int { return op(a, b) }
GO
`

// TestAttackCheckoutConversion: a verdict vouches for the bytes a clone
// of the commit holds, so a change whose .gitattributes makes git rewrite
// files on checkout (ident, eol, text, filter, working-tree-encoding) is
// not promoted on the judge box's reading of the raw blobs.
func TestAttackCheckoutConversion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to show what a clone holds")
	}
	repo := judgedRepo(t, nil)
	code, out, dir := shippedRun(t, "parallel-gates.yaml", repo, checkoutRewrites+attackWorked, "task=fix Add")
	if b, err := os.ReadFile(filepath.Join(dir, "commit.json")); err == nil {
		var c struct{ Branch string }
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		clone := filepath.Join(t.TempDir(), "clone")
		if o, err := exec.Command("git", "clone", "-q", "-b", c.Branch, filepath.Join(dir, "promote.git"), clone).CombinedOutput(); err != nil {
			t.Fatalf("clone the commit: %v\n%s", err, o)
		}
		test := exec.Command("go", "test", "./...")
		test.Dir = clone
		if o, err := test.CombinedOutput(); err != nil {
			t.Fatalf("BREACH: the gates passed a commit whose clone fails its own tests:\n%s\n%s", o, out)
		}
	}
	mustNotPromote(t, code, out, dir, "lint", "test")
}

// caseTwin makes Add read its operator from OP.txt and adds op.txt
// beside it (Go refuses case twins among source files, not among the
// files it embeds). Linux holds both; a checkout on a case-insensitive
// file system (macOS, Windows) holds one file named OP.txt with the bytes
// of op.txt, written last, so every such clone has the bug while the
// judge box on Linux compiled the fix.
const caseTwin = `set -e
cd /work
printf + > OP.txt
printf - > op.txt
cat > calc.go <<'GO'
package calc

import _ "embed"

//go:embed OP.txt
var sign string

var op = func(a, b int) int {
	if sign == "+" {
		return a + b
	}
	return a - b
}

// Add returns the sum of a and b.
func Add(a, b int) int { return op(a, b) }
GO
`

// TestAttackCaseTwin: a change whose tree holds two names a
// case-insensitive file system folds into one is not promoted.
func TestAttackCaseTwin(t *testing.T) {
	repo := judgedRepo(t, nil)
	code, out, dir := shippedRun(t, "parallel-gates.yaml", repo, caseTwin+attackWorked, "task=fix Add")
	if _, err := os.Stat(filepath.Join(dir, "commit.json")); err == nil {
		t.Fatalf("BREACH: committed OP.txt and op.txt, one file on a case-insensitive checkout (with the bug):\n%s", out)
	}
	mustNotPromote(t, code, out, dir, "lint", "test")
}
