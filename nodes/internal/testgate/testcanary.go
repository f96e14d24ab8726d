package testgate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/internal/gocanary"
	"github.com/sandgate/sandgate/internal/lines"
	"github.com/sandgate/sandgate/nodes/internal/alert"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// The change's code runs inside the test binary that reports on it, and
// go test -json believes every stdout line that starts with \x16 as
// test2json framing: an init that prints "--- PASS" for each test it can
// name, or that re-runs the binary and turns FAIL into PASS, forges the
// report. So every package whose test binary can hold the change's code
// gets, through internal/gocanary, a seal on each of its tests (a pass
// must show a secret token), a failing and a passing canary shaped like
// its own tests, all compiled in while nothing of the change runs and
// deleted, with the held-out tests, before any binary does. A report that
// breaks a seal or a canary was forged and is not believed.

// failFast matches -failfast, with which a binary stops at its first
// failure: the failing canary would stop the package's real tests.
var failFast = regexp.MustCompile(`(^|\s)--?(test\.)?failfast(\s|=|$)`)

// noCanary matches go test flags the two phases cannot honour: a binary
// of the user's own (-exec, -c, -o), listing instead of running (-list),
// a merged coverage profile (-coverprofile; go test merges it as each
// binary ends), or no JSON report.
var noCanary = regexp.MustCompile(`(^|\s)--?(exec|c|o|list|test\.list|coverprofile|test\.coverprofile|outputdir|json=false)(\s|=|$)`)

// wantsJSON matches go test's -json flag.
var wantsJSON = regexp.MustCompile(`(^|\s)--?json(=true)?(\s|$)`)

// plainGoTest reports whether args is one go test command the gate may
// wrap: an argv, or a shell line without operators (a canary failing
// would otherwise change what `go test && x` runs).
func plainGoTest(c command.Command, args []string) bool {
	if c.Argv != nil {
		return len(args) > 1 && args[0] == "go" && args[1] == "test"
	}
	f := strings.Fields(c.Line)
	return len(f) > 1 && f[0] == "go" && f[1] == "test" && !strings.ContainsAny(c.Line, ";&|`$()<>\n\\")
}

// CanaryOptions says how to canary one go test command, args as the box
// takes them; ok is false when canaries cannot apply: not one plain
// go test -json, or a flag the two phases cannot honour. selected says
// the harness selects the tests itself (a re-run) and adds the
// canaries' names; a selection in the blueprint's own command leaves
// the canaries out, for they would not run, and only the seals apply.
func CanaryOptions(c command.Command, args []string, selected bool) (gocanary.Options, bool) {
	cmd := c.Display(args)
	if !plainGoTest(c, args) || !wantsJSON.MatchString(cmd) || noCanary.MatchString(cmd) {
		return gocanary.Options{}, false
	}
	standalone := selected || !selectsTests.MatchString(cmd)
	return gocanary.Options{Failing: standalone && !failFast.MatchString(cmd), Passing: standalone}, true
}

// canaryPlan returns the canaries for one run of args, or nil when they
// cannot apply (canary: off, a report file, another format, or see
// CanaryOptions). The change's paths and the held-out tests' decide
// which packages get them; the held-out files leave the box once built.
func (t *Test) canaryPlan(v *changeView, args []string, selected bool) *gocanary.Plan {
	if !t.canary || t.report != "" || (t.format != "auto" && t.format != "go-json") {
		return nil
	}
	o, ok := CanaryOptions(t.run, args, selected)
	if !ok {
		return nil
	}
	for p := range v.changes {
		o.Changed = append(o.Changed, p)
	}
	for p := range v.extra {
		o.Changed = append(o.Changed, p)
		o.Hide = append(o.Hide, p)
	}
	slices.Sort(o.Changed)
	slices.Sort(o.Hide)
	o.Command = args
	return gocanary.NewPlan(viewTree{v}, o)
}

// runCanaried runs args through the plan's two phases and returns the
// report as go test would have printed it, with the problems the
// canaries found.
func (t *Test) runCanaried(ctx context.Context, w *workspace.Workspace, p *gocanary.Plan, args []string, timeout time.Duration) (*sandbox.Result, []string, error) {
	exec := func(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) { return w.Command(ctx, c) }
	return RunCanaried(ctx, exec, p, args, timeout)
}

// RunCanaried runs args through the plan's two phases with exec and
// returns the report as go test would have printed it, a note naming the
// sealed packages at its end, and the problems the canaries found.
func RunCanaried(ctx context.Context, exec gocanary.Exec, p *gocanary.Plan, args []string, timeout time.Duration) (*sandbox.Result, []string, error) {
	raw, err := p.Run(ctx, exec, args, timeout, OutputBytes)
	if err != nil {
		return nil, nil, err
	}
	res, problems := p.Decode(raw)
	if d := p.Packages(); len(d) > 0 {
		res.Output = append(res.Output, fmt.Sprintf("\n[sandgate: seals and canaries in %d package(s): %s]\n", len(d), strings.Join(d, ", "))...)
	}
	return res, problems, nil
}

// viewTree is the change view as gocanary reads it.
type viewTree struct{ v *changeView }

func (t viewTree) Files(dir string) []string           { return t.v.files(dir) }
func (t viewTree) ReadFile(rel string) ([]byte, error) { return t.v.read(rel) }

// Dirs lists the directories of the base snapshot and of the change that
// hold regular files (not .git).
func (t viewTree) Dirs() []string {
	set := map[string]bool{}
	_ = filepath.WalkDir(t.v.snap, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(t.v.snap, filepath.Dir(p))
			set[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	for p, c := range t.v.changes {
		if !c.Deleted && c.Mode&os.ModeType == 0 {
			set[path.Dir(p)] = true
		}
	}
	for p := range t.v.extra {
		set[path.Dir(p)] = true
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// canaryAlert pages the operator's alert sinks when a seal or canary
// caught the test report being forged: something in the change is lying
// to the gate, which a person should hear about before a retry.
func canaryAlert(in *runtime.Input, forged []string) {
	if len(forged) == 0 {
		return
	}
	alert.Raise(in, alert.Event{Kind: alert.KindCanary, Key: in.NodeID,
		Text:   fmt.Sprintf("the test gate caught a forged report: %s", lines.First(forged[0])),
		Fields: map[string]string{"problems": fmt.Sprint(len(forged))}})
}
