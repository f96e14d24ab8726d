package testgate_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// bigTest makes go test -json write about 3 MB: 2,000 passing subtests
// that log 1 KB each, then one failing test at the very end.
const bigTest = `package big

import (
	"fmt"
	"strings"
	"testing"
)

func TestMany(t *testing.T) {
	for i := range 2000 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { t.Log(strings.Repeat("x", 1000)) })
	}
}

func TestZLate(t *testing.T) { t.Fatal("late failure: the one that matters") }
`

// TestTestGateReadsTheWholeStream: output far past the box's 1 MiB default
// cap is counted exactly and the late failure is named; only an excerpt
// is stored.
func TestTestGateReadsTheWholeStream(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	sum, a := nodetest.GateRun(t, repo, fixAdd+" && "+writeFiles(map[string]string{"big/big_test.go": bigTest}), "type: test\nrun: go test -json ./...")
	nodetest.MustFail(t, sum, a, "TestZLate (calc/big)", "late failure: the one that matters", "2003 passed, 1 failed")
	var v struct {
		Tests struct{ Passed, Failed, Skipped int }
	}
	if err := json.Unmarshal(nodetest.GateAttemptFile(t, sum, "verify.json"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Tests.Passed != 2003 || v.Tests.Failed != 1 {
		t.Fatalf("verify.json counts %+v, want 2003 passed and 1 failed", v.Tests)
	}
	log := nodetest.GateAttemptFile(t, sum, "test.log")
	if len(log) > 1<<20+200 || !strings.Contains(string(log), "left out of this log; the gate read all of them") {
		t.Fatalf("stored log is %d bytes, want a capped excerpt of a stream over 1 MiB", len(log))
	}
	if !strings.Contains(string(log), "late failure") {
		t.Fatal("the stored excerpt lost the stream's tail, where the failure is")
	}
}

// TestTestGateFailsOnOutputPastItsCap: passing tests followed by more
// output than the gate captures never pass on partial evidence.
func TestTestGateFailsOnOutputPastItsCap(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	sum, a := nodetest.GateRun(t, repo, fixAdd, "type: test\nrun: "+nodetest.Quote(`go test -json ./... && head -c 70000000 /dev/zero | tr '\0' x`))
	nodetest.MustFail(t, sum, a, "test output exceeded 64 MiB")
}

const (
	flakyTest = `package calc

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFlaky fails the first time it runs in a box.
func TestFlaky(t *testing.T) {
	t.Run("inner", func(t *testing.T) {
		marker := filepath.Join(os.TempDir(), "flaky-marker")
		if _, err := os.Stat(marker); err != nil {
			os.WriteFile(marker, nil, 0o644)
			t.Fatal("first run fails")
		}
	})
}
`
	// quietOnRerun silences the package when go test selects tests with
	// -run, as a re-run does.
	quietOnRerun = `package calc

import (
	"os"
	"strings"
	"testing"
)

func init() {
	for _, a := range os.Args {
		if testing.Testing() && strings.HasPrefix(a, "-test.run") {
			os.Exit(0)
		}
	}
}
`
	// sameName is a passing test named like calc's failing one.
	sameName = "package other\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"
)

// TestTestGateRerunFailed: re-runs tell flaky from broken, and a re-run
// clears a failure only on a reported pass of that test in its package.
func TestTestGateRerunFailed(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := []struct {
		name, prep string
		pass       bool
		flaky      string
		reruns     int
		want       string
	}{
		{"flaky subtest passes on re-run", fixAdd + " && " + writeFiles(map[string]string{"flaky_test.go": flakyTest}), true, "[TestFlaky]", 1, ""},
		{"broken test stays failing", "", false, "[]", 2, "Add(2, 3) = -1, want 5"},
		// The silenced re-run lacks its canaries: a forged report, which
		// clears nothing and ends the re-runs.
		{"package silenced on re-run", writeFiles(map[string]string{"quiet.go": quietOnRerun, "other/other_test.go": sameName}), false, "[]", 1, "Add(2, 3) = -1, want 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, c.prep, "type: test\nrun: go test -json ./...\nrerun_failed: 2")
			if c.pass {
				mustPass(t, sum, a)
			} else {
				nodetest.MustFail(t, sum, a, c.want)
			}
			if got := fmt.Sprint(a.Outputs["flaky"]); got != c.flaky && !(c.flaky == "[]" && got == "<nil>") {
				t.Fatalf("flaky = %s, want %s", got, c.flaky)
			}
			logs, _ := filepath.Glob(filepath.Join(sum.Dir, "nodes", "gate", "*", "rerun-*.log"))
			if len(logs) != c.reruns {
				t.Fatalf("%d re-run logs, want %d: %v", len(logs), c.reruns, logs)
			}
		})
	}
}
