package gocanary

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
)

// dropper is the forger that deletes every line of the known tests that
// failed.
func dropper(t *testing.T) gocanarytest.Forger {
	for _, f := range gocanarytest.Forgers("calc") {
		if f.File == "zz_drop_failed.go" {
			return f
		}
	}
	t.Fatal("no dropper among the forgers")
	return gocanarytest.Forger{}
}

// TestAttackDroppedTestIsMissed: with the command's own selection (seals
// only) or with -failfast (no failing canary), the dropper's report holds
// no failure and no unearned pass; the tests the binary holds and the
// command selects must still each have a result.
func TestAttackDroppedTestIsMissed(t *testing.T) {
	f := dropper(t)
	const missing = "TestAdd: compiled into its binary and selected by the command, but the report gives none of them a result"
	for name, c := range map[string]struct {
		o    Options
		args []string
		want string
	}{
		"-run":  {Options{}, []string{"go", "test", "-json", "-run", "Add", "."}, missing},
		"-skip": {Options{}, []string{"go", "test", "-json", "-skip", "Zero", "."}, missing},
		// The tests after TestAdd never ran; so may the passing canary.
		"-failfast": {Options{Passing: true}, []string{"go", "test", "-json", "-failfast", "."}, "report for package calc is forged"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := module(t, buggy, map[string]string{f.File: f.Source})
			_, res, problems := run(t, dir, []string{"calc.go", f.File}, c.o, c.args...)
			if len(problems) == 0 || !strings.Contains(problems[0], c.want) {
				t.Fatalf("not caught: problems %v\n%s", problems, res.Output)
			}
		})
	}
}

// TestSelectedRunsAreNotMissing: honest runs that leave tests out on
// purpose (a selection, also one after -args the plan does not read) or
// repeat them are not taken for deletions.
func TestSelectedRunsAreNotMissing(t *testing.T) {
	for _, c := range []struct {
		add  string
		o    Options
		args []string
	}{
		{fixed, Options{}, []string{"go", "test", "-json", "-run", "^TestAdd$", "./..."}},
		{fixed, Options{}, []string{"go", "test", "-json", "-skip", "TestAdd$|TestOne", "./..."}},
		{fixed, both, []string{"go", "test", "-json", "-count=2", "-shuffle=on", "./..."}},
		{fixed, Options{}, []string{"sh", "-c", "go test -json -short ./... -args -test.run=TestOne"}},
	} {
		dir := module(t, c.add, nil)
		_, res, problems := run(t, dir, []string{"calc.go"}, c.o, c.args...)
		if len(problems) > 0 {
			t.Errorf("%q: problems %v\n%s", c.args, problems, res.Output)
		}
	}
}
