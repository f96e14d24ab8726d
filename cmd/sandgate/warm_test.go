package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/internal/gitfixture"
)

// TestRunWarmsOncePerCommit: the first run on a commit says it warms the
// build cache, the second on that commit does not warm it again, and
// --cold-builds leaves the warm box out.
func TestRunWarmsOncePerCommit(t *testing.T) {
	repo := gitRepo(t)
	// A commit no other test's repository has, so no other run warmed it.
	os.WriteFile(filepath.Join(repo, "unique.go"), []byte(fmt.Sprintf("package calc\n\nconst unique = %q\n", t.Name()+time.Now().String())), 0o644)
	if err := gitfixture.Commit(repo, "dev", "unique"); err != nil {
		t.Fatal(err)
	}
	bp := writeBlueprint(t, strings.Replace(cliBlueprint, "FIX", "sed -i 's/a - b/a + b/' calc.go", 1))
	const warming = "warming the build cache for "
	for i, c := range []struct {
		args  []string
		warms bool
	}{{[]string{"--cold-builds"}, false}, {nil, true}, {nil, false}} {
		code, out, errs := runCLI(append([]string{"run", bp, "--repo", repo, "--runs-dir", t.TempDir()}, c.args...)...)
		if code != exitOK || !strings.Contains(out, "status: succeeded") {
			t.Fatalf("run %d: exit %d\n%s%s", i, code, out, errs)
		}
		if got := strings.Contains(out, warming); got != c.warms {
			t.Errorf("run %d %v: warms %v, want %v:\n%s", i, c.args, got, c.warms, out)
		}
		if c.warms && !strings.Contains(out, "build cache warmed: ") {
			t.Errorf("run %d: no line says what the warm step did:\n%s", i, out)
		}
	}
}
