package promote_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgrt "github.com/sandgate/sandgate/runtime"
)

// promoteRun runs prep in the box, a gate that passes whatever changed,
// then git_commit, and returns the run's summary.
func promoteRun(t *testing.T, repo, prep string) *sgrt.Summary {
	t.Helper()
	src := "version: 1\nname: p\nstart: prep\nnodes:\n  prep: {type: shell, run: " + nodetest.Quote(prep) + ", next: guard}\n" +
		"  guard: {type: protect, paths: [nothing-matches-this], next: commit}\n" +
		"  commit: {type: git_commit, next: done}\n  done: {type: succeed}\n"
	return nodetest.NewHarness(t, repo).Run(t, src, nil)
}

// TestAttackPromoteSparseFiles: 24 sparse 64 MiB files take 108 KB on
// disk but 1.5 GiB to read. Promotion must refuse them by the cap, with
// the numbers and paths, without the harness reading them into memory.
func TestAttackPromoteSparseFiles(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sum := promoteRun(t, repo, "for i in $(seq 1 24); do truncate -s 64M big$i.bin; done; ls big*.bin | wc -l")
	runtime.ReadMemStats(&after)
	if sum.Status != sgrt.StatusHandedOff {
		t.Fatalf("BREACH: 1.5 GiB of sparse files were not refused: run %s (%s)", sum.Status, sum.Reason)
	}
	for _, want := range []string{"over the cap of 64.0 MiB", "1.5 GiB (1610612736 bytes) in 24 files", "big1.bin (64.0 MiB)"} {
		if !strings.Contains(sum.Reason, want) {
			t.Errorf("refusal lacks %q: %s", want, sum.Reason)
		}
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, "commit.json")); err == nil {
		t.Error("BREACH: a commit was made")
	}
	// Loose bound: reading the files would allocate at least 1.5 GiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 512<<20 {
		t.Errorf("BREACH: the harness allocated %d MiB handling sparse files", alloc>>20)
	}
	t.Logf("harness allocated %d KiB during the run", (after.TotalAlloc-before.TotalAlloc)>>10)
}

// TestAttackPromoteGitDirectories: files under .git in any spelling, at
// any depth, would configure (and run hooks in) the repository of whoever
// checks the branch out. Promotion must refuse them, naming the path.
func TestAttackPromoteGitDirectories(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := map[string]string{
		".Git/hooks/pre-commit":  "mkdir -p .Git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .Git/hooks/pre-commit && chmod +x .Git/hooks/pre-commit",
		"sub/.git/hooks/x":       "mkdir -p sub/.git/hooks && echo x > sub/.git/hooks/x",
		".GIT/config":            "mkdir -p .GIT && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .GIT/config",
		"git~1/config":           "mkdir -p git~1 && echo x > git~1/config",
		"a/.git. /config":        "mkdir -p 'a/.git. ' && echo x > 'a/.git. /config'",
		".g\u200cit/config":      "mkdir -p '.g\u200cit' && echo x > '.g\u200cit/config'",
		".gitmodules":            "ln -s /etc/passwd .gitmodules",
		"lib/.gitmodules":        "mkdir lib && printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = --upload-pack=touch /tmp/pwned\\n' > lib/.gitmodules",
		".gitmodules (absolute)": "printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = https://evil.example/x.git\\n' > .gitmodules",
	}
	for path, prep := range cases {
		t.Run(path, func(t *testing.T) {
			sum := promoteRun(t, repo, prep)
			name := strings.TrimSuffix(path, " (absolute)")
			if sum.Status != sgrt.StatusHandedOff || !strings.Contains(sum.Reason, name) {
				t.Fatalf("BREACH: %s was not refused by name: run %s (%s)", path, sum.Status, sum.Reason)
			}
			if _, err := os.Stat(filepath.Join(sum.Dir, "commit.json")); err == nil {
				t.Fatal("BREACH: a commit was made")
			}
		})
	}
	// Control: names that merely look alike are promoted.
	sum := promoteRun(t, repo, "mkdir -p .githooks .github && echo x > .githooks/pre-commit && echo y > .github/ci.yml && printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = ../x.git\\n' > .gitmodules")
	if sum.Status != sgrt.StatusSucceeded {
		t.Fatalf("safe paths were refused: %s (%s)", sum.Status, sum.Reason)
	}
}

// TestAttackDiffCapBinaries: binary files have no diff lines, so a line
// cap alone let any amount of them through. diff_cap must count them as
// files and bytes and say so.
func TestAttackDiffCapBinaries(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	bins := "for i in 1 2 3; do head -c 40000 /dev/urandom > b$i.bin; printf '\\0' >> b$i.bin; done"
	cases := []struct{ name, prep, gate, want string }{
		{"max_bytes", bins, "type: diff_cap\nmax_lines: 200\nmax_bytes: 100000", "120003 changed bytes (117.2 KiB), cap 100000"},
		{"max_files", bins, "type: diff_cap\nmax_lines: 200\nmax_files: 2", "3 changed files (3 binary), cap 2"},
		{"sparse over the harness cap", "for i in $(seq 1 24); do truncate -s 64M big$i.bin; done", "type: diff_cap\nmax_lines: 200", "over the harness cap of 64.0 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, c.prep, c.gate)
			nodetest.MustFail(t, sum, a, c.want)
		})
	}
}
