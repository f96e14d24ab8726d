package gocanary

import (
	"path/filepath"
	"strings"
	"testing"
)

// neighbour is a test file the change adds to lone, a package it reaches
// (so lone is sealed, and its own tests pass with their tokens). While
// the second phase runs, it waits for the report of calc, a package the
// change does not reach, in the file beside calc's stashed binary, and
// twice's (which imports calc), and rewrites every failure in them to a pass, with the exit status beside it.
const neighbour = `package lone

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNeighbour(t *testing.T) {
	r := filepath.Dir(filepath.Dir(filepath.Dir(os.Args[0])))
	done := map[string]bool{}
	for end := time.Now().Add(30 * time.Second); len(done) < 2 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		dirs, _ := filepath.Glob(filepath.Join(r, "*"))
		for _, d := range dirs {
			if pkg, _ := os.ReadFile(filepath.Join(d, "pkg")); string(pkg) != "calc" && string(pkg) != "calc/twice" || done[d] {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, "rc")); err != nil {
				continue
			}
			done[d] = true
			out, _ := os.ReadFile(filepath.Join(d, "out"))
			s := strings.NewReplacer("\"Action\":\"fail\"", "\"Action\":\"pass\"", "--- FAIL", "--- PASS", "FAIL\\t", "ok  \\t", "FAIL\\n", "PASS\\n").Replace(string(out))
			os.WriteFile(filepath.Join(d, "out"), []byte(s), 0o644)
			os.WriteFile(filepath.Join(d, "rc"), []byte("0\n"), 0o644)
		}
	}
}
`

// TestAttackNeighbourRewritesUnreachedReport: calc keeps its bug and the
// change touches only lone. calc is not reached, so it is not sealed; if
// its binary runs in the second phase beside lone's, the change's code in
// lone's binary can rewrite calc's report before the harness reads it.
// calc's failure must stay in the report.
func TestAttackNeighbourRewritesUnreachedReport(t *testing.T) {
	for _, args := range [][]string{
		{"go", "test", "-json", "./..."},
		// A command whose packages cannot be named anew (-debug-trace is
		// not in the plan's flag table) runs every binary in phase two.
		{"go", "test", "-json", "-debug-trace=" + filepath.Join(t.TempDir(), "trace.json"), "./..."},
	} {
		neighbourCase(t, args)
	}
}

func neighbourCase(t *testing.T, args []string) {
	dir := module(t, buggy, map[string]string{"lone/zz_neighbour_test.go": neighbour})
	_, res, problems := run(t, dir, []string{"lone/zz_neighbour_test.go"}, both, args...)
	got := results(res.Output)
	if got["calc TestAdd"] != "fail" && len(problems) == 0 {
		t.Fatalf("calc's failure was rewritten by the change's code in lone and believed: exit %d, results %v\n%s", res.ExitCode, got, res.Output)
	}
	if !strings.Contains(string(res.Output), "Add(2, 3) = -1, want 5") && len(problems) == 0 {
		t.Fatalf("calc's failure message is gone and nothing was refused\n%s", res.Output)
	}
}
