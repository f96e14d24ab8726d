package promote_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/hostile"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// TestAttackCommitMessageEscapes: the commit message is a template over
// what the box wrote (here a command's output, in fix-failing-test the
// agent's summary). The box writes an erase-line, a carriage return, an
// OSC 52 clipboard write and a bidi override into it; `git log`, which
// prints messages as they are, is where a reviewer reads them. The
// commit's message holds them written out, not raw.
func TestAttackCommitMessageEscapes(t *testing.T) {
	repo := ignoreRepo(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	nodetest.Run(t, "", "git", "clone", "-q", "--bare", repo, remote)
	src := strings.NewReplacer("SCRIPT", `"echo 'package main' > real.go && printf 'did it\\033[2K\\rverdict: reviewed\\033]52;c;Y3VybA==\\a \\342\\200\\256x'"`,
		`message: "add real.go"`, `message: "add real.go\n\n${{ outputs.fix.output }}"`,
		"REMOTE", remote, "REVIEWS", t.TempDir(), "GUARD", `["ci/**"]`).Replace(ignorePipeline)
	sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run %s: %s\n%s", sum.Status, sum.Reason, src)
	}
	msg := nodetest.Run(t, remote, "git", "log", "-1", "--format=%B", "fix/ignore")
	if !strings.Contains(msg, "verdict: reviewed") {
		t.Fatalf("message %q lacks the output", msg)
	}
	if r, bad := hostile.Unprintable(msg); bad {
		t.Errorf("commit message holds %U: %q", r, msg)
	}
}
