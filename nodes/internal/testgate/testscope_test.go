package testgate_test

import (
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// aliasSkipInit deselects the failing test by overwriting one of the
// test binary's arguments through an alias of os.Args, with names the
// detection scan does not recognise: only the declared-tests check
// stands between it and a pass.
const aliasSkipInit = `package calc

import (
	"os"
	"strings"
)

func init() {
	a := os.Args
	if strings.HasSuffix(a[0], "."+"te"+"st") && len(a) > 1 {
		a[1] = "-te" + "st.skip=^TestAdd$"
	}
}
`

// missingFromReport is how the canaried run names a test the binary holds
// and the command selects that has no result.
const missingFromReport = "TestAdd: compiled into its binary and selected by the command, but the report gives none of them a result"

// TestTestGateHarnessChecks: each case performs an attack on the test
// gate (run: go test -json ./...) that passes on the test binary's word
// alone; the gate must fail it from what the harness reads itself.
func TestTestGateHarnessChecks(t *testing.T) {
	cases := []struct {
		name, prep, gate, want string
		sub                    bool
	}{
		// With the canaries, the test list read from the binary's test
		// main before it ran catches the deselection; without them, the
		// tests declared in the files the harness reads.
		{"os.Args -test.skip with detection allowed", writeFiles(map[string]string{"zz_init.go": skipInit}),
			"allow_test_detection: true", missingFromReport, false},
		{"os.Args -test.skip with detection allowed, canary off", writeFiles(map[string]string{"zz_init.go": skipInit}),
			"allow_test_detection: true\ncanary: \"off\"", "TestAdd was declared but never ran (package calc)", false},
		{"aliased os.Args -test.skip past the scan", writeFiles(map[string]string{"zz_init.go": aliasSkipInit}),
			"", missingFromReport, false},
		{"aliased os.Args -test.skip past the scan, canary off", writeFiles(map[string]string{"zz_init.go": aliasSkipInit}),
			"canary: \"off\"", "TestAdd was declared but never ran (package calc)", false},
		{"go.mod ignore directive hides sub", fixAdd + " && printf 'ignore ./sub\\n' >> go.mod",
			"", "the change adds ignore directives to go.mod (./sub)", true},
		{"root go.work added", fixAdd + " && printf 'go 1.22\\n\\nuse .\\n' > go.work",
			"", "the change adds, changes or deletes go.work", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := nodetest.SeedRepo(t)
			if c.sub {
				repo = seedWithSub(t)
			}
			sum, a := nodetest.GateRun(t, repo, c.prep, "type: test\nrun: go test -json ./...\n"+c.gate)
			nodetest.MustFail(t, sum, a, c.want)
		})
	}
}

// TestTestGateDeclaredTestsRespectRun: a blueprint whose own command
// selects tests with -run is not held to every declared test.
func TestTestGateDeclaredTestsRespectRun(t *testing.T) {
	sum, a := nodetest.GateRun(t, nodetest.SeedRepo(t), fixAdd, "type: test\nrun: go test -json -run '^TestAdd$' ./...")
	mustPass(t, sum, a)
}
