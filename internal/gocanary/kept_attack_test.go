package gocanary

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// swapper is a test file the change adds to lone (reached, sealed). In the
// second phase it finds the binaries kept for the last run of calc and
// twice (buggy, unreached) beside its own stash and rewrites one of their
// files, so that when they run, after every sealed binary, calc's failure
// is gone.
const swapper = `package lone

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSwap(t *testing.T) {
	kept := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(os.Args[0])))), "l")
	dirs, _ := filepath.Glob(filepath.Join(kept, "*"))
	for _, d := range dirs {
		bin, _ := os.ReadFile(filepath.Join(d, "bin"))
		%s
	}
}
`

// TestAttackSwapsAKeptBinary: calc keeps its bug and the change touches
// only lone. calc's and twice's binaries, linked in the first phase, wait
// for the last run while lone's code runs; whether it replaces a binary
// with a program that reports a pass, narrows its arguments to no test,
// sends it to another directory, or rewrites the copy of test2json the
// last run reads it through, calc's failure must stay in the
// report, and the change must be refused. Or it leaves the binary alone
// and writes calc's output and exit status ahead, read-only (the box's
// commands are not root; the test is only real run as a user that is
// not either, as .ci/rootless runs it): calc's real failure must be in
// the report.
func TestAttackSwapsAKeptBinary(t *testing.T) {
	for name, body := range map[string]string{
		"binary": `p := filepath.Join(d, "b", string(bin))
		os.Remove(p)
		os.WriteFile(p, []byte("#!/bin/sh\necho PASS\nexit 0\n"), 0o755)`,
		"arguments": `_ = bin
		os.WriteFile(filepath.Join(d, "args"), []byte("'-test.run=^NoSuchTest$' "), 0o644)`,
		// The files the last run writes beside a kept binary (its output
		// and exit status) are no part of its digest: written read-only
		// ahead, the run cannot replace them and they pass for its report.
		"results": `_ = bin
		where, _ := os.ReadFile(filepath.Join(d, "dir"))
		pkg, tests := "calc", []string{"TestAdd", "TestAddZero", "TestAddSkipped"}
		if filepath.Base(string(where)) == "twice" {
			pkg, tests = "calc/twice", []string{"TestTwice"}
		}
		out := ""
		for _, n := range tests {
			out += "{\"Action\":\"run\",\"Package\":\"" + pkg + "\",\"Test\":\"" + n + "\"}\n"
			out += "{\"Action\":\"pass\",\"Package\":\"" + pkg + "\",\"Test\":\"" + n + "\",\"Elapsed\":0}\n"
		}
		out += "{\"Action\":\"pass\",\"Package\":\"" + pkg + "\",\"Elapsed\":0}\n"
		os.WriteFile(filepath.Join(d, "out"), []byte(out), 0o444)
		os.WriteFile(filepath.Join(d, "rc"), []byte("0\n"), 0o444)`,
		// The first phase keeps a copy of test2json beside the binaries
		// for the last run (l/t2j): rewritten, it reports a pass for
		// whatever package it is handed.
		"test2json": `_ = bin
		if filepath.Base(d) == "t2j" {
			os.Remove(d)
			os.WriteFile(d, []byte("#!/bin/sh\nprintf '{\"Action\":\"pass\",\"Package\":\"%s\",\"Elapsed\":0}\\n' \"$3\"\n"), 0o755)
		}`,
		"directory": `_ = bin
		os.WriteFile(filepath.Join(d, "dir"), []byte(os.TempDir()), 0o644)`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := module(t, buggy, map[string]string{"lone/zz_swap_test.go": fmt.Sprintf(swapper, body)})
			_, res, problems := run(t, dir, []string{"lone/zz_swap_test.go"}, both)
			got := results(res.Output)
			if got["calc TestAdd"] != "fail" && len(problems) == 0 {
				t.Fatalf("calc's kept binary was changed by the change's code in lone and its report believed: exit %d, results %v\n%s", res.ExitCode, got, res.Output)
			}
			if res.ExitCode == 0 {
				t.Fatalf("exit 0 with calc's bug: problems %v\n%s", problems, res.Output)
			}
			if got["calc/lone TestSwap"] != "pass" {
				t.Fatalf("the attack did not run: results %v\n%s", got, res.Output)
			}
			if name == "results" {
				// The kept files are intact: calc runs, and its own failure is
				// in the report.
				if got["calc TestAdd"] != "fail" {
					t.Fatalf("calc's own result is not in the report: results %v\n%s", got, res.Output)
				}
				return
			}
			if !strings.Contains(strings.Join(problems, "\n"), "package calc, which the change cannot reach") {
				t.Fatalf("calc's changed binary was not refused: problems %v", problems)
			}
		})
	}
}

// TestUnreachedBinariesLinkedOnce: an honest change to lone; calc and
// twice are not reached, so their binaries, kept from the first phase,
// run last with their own results, and no plain go test links them again.
func TestUnreachedBinariesLinkedOnce(t *testing.T) {
	dir := module(t, buggy, nil)
	var cmds []string
	o := both
	o.Changed, o.Root, o.ExecPath, o.TmpDir = []string{"lone/lone.go"}, dir, t.TempDir()+"/exec", t.TempDir()
	args := []string{"go", "test", "-json", "./..."}
	o.Command = args
	p := NewPlan(DirTree(dir), o)
	ex := localExec(dir)
	raw, err := p.Run(t.Context(), func(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
		cmds = append(cmds, string(c.Stdin))
		return ex(ctx, c)
	}, args, 0, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	res, problems := p.Decode(raw)
	got := results(res.Output)
	if len(problems) > 0 || got["calc TestAdd"] != "fail" || got["calc/twice TestTwice"] != "fail" || got["calc/lone TestOne"] != "pass" {
		t.Fatalf("problems %v, results %v\n%s", problems, got, res.Output)
	}
	for _, c := range cmds[1:] {
		if strings.Contains(c, "go test") {
			t.Fatalf("a second go test ran (%d box commands):\n%s", len(cmds), c)
		}
	}
}
