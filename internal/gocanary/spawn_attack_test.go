package gocanary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
)

// TestAttackSpawnedProgramFindsNoSecrets: a package the change cannot
// reach by imports (e2e) runs, through a helper package, a program the
// change rewrote (gocanarytest.Stealer), which copies the sealed sources
// it finds to /tmp for the overlay reader the change put in calc. The bug
// stays. The program must find no seal, whether the unreached packages
// run after the rounds (a command whose packages can be named anew) or
// in the second phase (one whose packages cannot be named anew: -debug-trace is not in the plan's
// flag table), and the reader's forged pass must be caught.
//
// The run has a TMPDIR of its own: the plan's directories (t.TempDir), go's
// work directories and the programs' temporary files all go there, and the
// reader walks it whole instead of the host's /tmp/go-build*, which on a
// busy host holds other builds' hundreds of MB (read at every forge). The
// Stealer looks in TMPDIR as well as /tmp; the loot stays in /tmp.
func TestAttackSpawnedProgramFindsNoSecrets(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	reader := gocanarytest.Reader("calc")
	extra := map[string]string{reader.File: reader.Source}
	for k, v := range gocanarytest.SpawnRepo {
		extra[k] = v
	}
	extra[gocanarytest.StealerFile] = gocanarytest.Stealer
	for name, args := range map[string][]string{
		"unreached packages run last":   {"go", "test", "-json", "./..."},
		"a command it cannot name anew": {"go", "test", "-json", "-debug-trace=" + filepath.Join(tmp, "trace.json"), "./..."},
	} {
		t.Run(name, func(t *testing.T) {
			dir := module(t, buggy, extra)
			before, _ := filepath.Glob(gocanarytest.LootGlob)
			t.Cleanup(func() {
				after, _ := filepath.Glob(gocanarytest.LootGlob)
				for _, d := range after {
					if !contains(before, d) {
						os.RemoveAll(d)
					}
				}
			})
			p, res, problems := run(t, dir, []string{gocanarytest.StealerFile, reader.File}, both, args...)
			// With a command it cannot name anew every package is sealed
			// (TestAttackNeighbourRewritesUnreachedReport).
			if !contains(p.Packages(), ".") || (name == "unreached packages run last") == contains(p.Packages(), "e2e") {
				t.Fatalf("canaried %v: calc must be; e2e (reached only through a program it runs) only when every package is", p.Packages())
			}
			got := results(res.Output)
			if got["calc/e2e TestHello"] != "pass" {
				t.Fatalf("the program did not run (so this test proves nothing): %v\n%s", got, res.Output)
			}
			// A loot file holding a seal of this run's plan was stolen from
			// it (the host's /tmp may hold other runs' overlays).
			var secrets []string
			for _, pp := range p.pkgs {
				for _, ts := range pp.seals {
					for _, tk := range ts {
						secrets = append(secrets, tk.pass)
					}
				}
			}
			looted := 0
			after, _ := filepath.Glob(gocanarytest.LootGlob + "/*.go")
			for _, f := range after {
				b, _ := os.ReadFile(f)
				for _, sec := range secrets {
					if strings.Contains(string(b), strings.Replace(sec, " ", "), int64(", 1)) {
						looted++
						break
					}
				}
			}
			if looted > 0 {
				t.Errorf("the program the change rewrote copied %d sealed sources out of the first phase", looted)
			}
			if got["calc TestAdd"] == "pass" && !strings.Contains(strings.Join(problems, "\n"), "package calc is forged") {
				t.Fatalf("the buggy TestAdd passed unforged: problems %v, results %v", problems, got)
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
