package gocanary

import (
	"slices"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
)

func TestCommandDirs(t *testing.T) {
	tree := mapTree{
		"go.mod":            "module example.com/m\n",
		"a/a.go":            "package a\n",
		"a/b/b.go":          "package b\n",
		"ab/ab.go":          "package ab\n",
		"c/c.go":            "package c\n",
		"sub/go.mod":        "module example.com/other\n",
		"sub/s.go":          "package sub\n",
		"sub/x/x.go":        "package x\n",
		"m.go":              "package m\n",
		"tools/go.mod":      "module example.com/m/tools\n",
		"tools/t/t.go":      "package t\n",
		"tools/t/t_test.go": "package t\n",
	}
	g := readGraph(tree)
	dirs := []string{".", "a", "a/b", "ab", "c", "sub", "sub/x", "tools/t"}
	cases := []struct {
		cmd  string
		want string // the matched dirs, or "all" for every one
	}{
		{"go test -json ./a", "a"},
		{"go test -json ./a/", "a"},
		{"go test -json ./a/...", "a,a/b"},
		{"go test -json ./a...", "a,a/b,ab"},
		{"go test -json", "."},
		{"go test -json .", "."},
		{"go test -json -run TestX ./c -count=1", "c"},
		{"go test -json ./...", "all"},
		{"go test -json /root/repo/c", "c"},
		{"go test -json example.com/m/a", "a"},
		{"go test -json example.com/m/a/...", "a,a/b"},
		{"go test -json example.com/m/...", "all"},
		{"go test -json example.com/other/x", "sub/x"},
		{"go test -json example.com/m/tools/t", "tools/t"},
		{"go test -json example.com/m/t...", "tools/t"},
		{"go test -json example.com/...", "all"},
		{"go test -json all", "all"},
		{"go test -json std", "all"},
		{"go test -json fmt", "all"},
		{"go test -json github.com/x/y", "all"},
		{"go test -json ../elsewhere", "all"},
		{"go test -json /elsewhere/c", "all"},
		{"go test -json ./a/../../c", "all"},
		{"go test -json a_test.go", "all"},
		{"go test -json -C sub ./x", "all"},
		{"go test -json -unknownflag ./a", "all"},
	}
	for _, c := range cases {
		for _, args := range [][]string{strings.Fields(c.cmd), {"sh", "-c", c.cmd}} {
			match := commandDirs(g, "/root/repo", args)
			got := "all"
			if match != nil {
				var on []string
				for _, d := range dirs {
					if match(d) {
						on = append(on, d)
					}
				}
				if got = strings.Join(on, ","); len(on) == len(dirs) {
					got = "all"
				}
			}
			if got != c.want {
				t.Errorf("%q: %s, want %s", args, got, c.want)
			}
		}
	}
	if commandDirs(g, "/root/repo", nil) != nil {
		t.Error("no command: every package")
	}
	if commandDirs(g, "/root/repo", []string{"sh", "-c", "go test -json ./a && go test -json ./c"}) != nil {
		t.Error("a shell line it cannot read: every package")
	}
}

// TestPlanSealsWhatTheCommandTests: the change reaches both packages, the
// command tests one; only that one is sealed, and it passes clean.
func TestPlanSealsWhatTheCommandTests(t *testing.T) {
	dir := module(t, fixed, nil)
	p, res, problems := run(t, dir, []string{"calc.go"}, both, "go", "test", "-json", "./twice")
	if len(problems) > 0 || res.ExitCode != 0 {
		t.Fatalf("exit %d, problems %v\n%s", res.ExitCode, problems, res.Output)
	}
	if d := p.Packages(); !slices.Equal(d, []string{"twice"}) {
		t.Errorf("sealed %v, want only twice", d)
	}
	if got := results(res.Output); got["calc/twice TestTwice"] != "pass" || got["calc/twice "] != "pass" {
		t.Errorf("results %v", got)
	}
}

// TestAttackUnsealedPackageIsRefused: should the harness misread which
// packages the command tests, a package the change reaches runs without
// seals. Here the plan is told the command tests only twice while it
// tests everything, and a forger beside the bug turns calc's failures
// into passes: the report of the unsealed package is refused.
func TestAttackUnsealedPackageIsRefused(t *testing.T) {
	for _, f := range gocanarytest.Forgers("calc")[:1] {
		dir := module(t, buggy, map[string]string{f.File: f.Source})
		o := both
		o.Command = []string{"go", "test", "-json", "./twice"}
		_, res, problems := run(t, dir, []string{"calc.go", f.File}, o, "go", "test", "-json", "./...")
		if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), "package calc holds the change's code and ran") {
			t.Fatalf("%s: an unsealed package's report was believed: problems %v\n%s", f.Name, problems, res.Output)
		}
	}
}
