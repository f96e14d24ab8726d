package checks

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
)

// Parity checks the sandbox's tool versions against what the repository
// pins (go.mod's and go.work's go and toolchain lines, .tool-versions,
// .nvmrc, the versions its GitHub Actions workflows set up) and what the
// blueprint lists, in the box — so with the image's tools when the
// blueprint has a sandbox.image, before any agent work starts; in
// a Go repository it also checks that the box's go command can load the
// modules at all (see goLoads).
type Parity struct {
	tools     map[string]string
	workflows string
}

var _ runtime.Node = (*Parity)(nil)

func newParity(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[ParityConfig](spec)
	if err != nil {
		return nil, err
	}
	p := &Parity{tools: c.Tools, workflows: c.Workflows}
	if p.tools == nil {
		p.tools = map[string]string{}
	}
	return p, nil
}

// versionCmd says how to ask a tool its version inside the box.
var versionCmd = map[string]string{
	"go": "go env GOVERSION", "golang": "go env GOVERSION", "node": "node --version", "nodejs": "node --version",
	"python": "python3 --version", "ruby": "ruby --version", "rust": "rustc --version", "java": "java -version 2>&1",
}

var verRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// parseVer returns major, minor, patch of the first version in s.
func parseVer(s string) ([3]int, bool) {
	m := verRE.FindStringSubmatch(s)
	if m == nil {
		if n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s), "v")); err == nil {
			return [3]int{n, -1, -1}, true
		}
		return [3]int{}, false
	}
	var v [3]int
	for i := 0; i < 3; i++ {
		v[i] = -1
		if m[i+1] != "" {
			v[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v, true
}

// matches reports whether have satisfies want at want's precision.
func matches(want, have [3]int) bool {
	for i := 0; i < 3; i++ {
		if want[i] >= 0 && want[i] != have[i] {
			return false
		}
	}
	return true
}

func less(a, b [3]int) bool {
	for i := 0; i < 3; i++ {
		if max(a[i], 0) != max(b[i], 0) {
			return max(a[i], 0) < max(b[i], 0)
		}
	}
	return false
}

// Run implements runtime.Node.
func (p *Parity) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := w.Exec(ctx, pinScript, time.Minute)
	if err != nil {
		return nil, err
	}
	wants := append(pinnedVersions(string(res.Output)), p.blueprintVersions()...)
	where := "the sandbox"
	if img := w.Image(); img != "" {
		where = "the sandbox (image " + img + ")"
	}
	var mismatches []string
	if strings.Contains(string(res.Output), "\x1ego.mod\n") || strings.Contains(string(res.Output), "\x1ego.work\n") {
		m, err := goLoads(ctx, w)
		if err != nil {
			return nil, err
		}
		mismatches = append(mismatches, m...)
	}
	m, err := versionMismatches(ctx, w, where, wants)
	if err != nil {
		return nil, err
	}
	mismatches = append(mismatches, m...)
	// The workflows' versions: on the host's root a newer toolchain than
	// CI's is the usual case and no reason to stop a run, so by default
	// only a box built from an image (meant to match CI) fails on them.
	warnings, err := versionMismatches(ctx, w, where, workflowVersions(string(res.Output)))
	if err != nil {
		return nil, err
	}
	if p.workflows == "enforce" || (p.workflows != "warn" && w.Image() != "") {
		mismatches, warnings = append(mismatches, warnings...), nil
	}
	r := &runtime.Result{Outputs: map[string]any{"mismatches": mismatches, "warnings": warnings}}
	g := verdict.GateResult{Pass: len(mismatches) == 0}
	if !g.Pass {
		g.Reason = fmt.Sprintf("%d tool version mismatch(es)", len(mismatches))
		r.Feedback = "The sandbox's tools differ from what the repository pins, so results here would not match CI:\n" + strings.Join(mismatches, "\n")
	}
	// Tool versions do not depend on the change: the verdict holds for any.
	return gate.Finish(in, "parity", verdict.AnyChange, start, g, r)
}

// versionMismatches asks the box each wanted tool's version and says how
// each differs.
func versionMismatches(ctx context.Context, w *workspace.Workspace, where string, wants []toolWant) ([]string, error) {
	var out []string
	for _, wt := range wants {
		cmd, ok := versionCmd[wt.tool]
		if !ok {
			cmd = wt.tool + " --version"
		}
		res, err := w.Exec(ctx, cmd, time.Minute)
		if err != nil {
			return nil, err
		}
		if m := wt.mismatch(where, res.ExitCode, string(res.Output)); m != "" {
			out = append(out, m)
		}
	}
	return out, nil
}

// toolWant is one tool version something pins.
type toolWant struct {
	tool, version, source string
	// minimum: the pin is a lower bound (go.mod's go directive).
	minimum bool
	// anyOf are other versions that also satisfy the pin (workflow jobs
	// that set up different versions: the box may match any one).
	anyOf []string
}

// pinnedVersions reads the pin files the box printed, each after a \x1e
// and its name.
func pinnedVersions(output string) []toolWant {
	var wants []toolWant
	for _, chunk := range strings.Split(output, "\x1e")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		for _, line := range strings.Split(body, "\n") {
			f := strings.Fields(line)
			switch {
			case (name == "go.mod" || name == "go.work") && len(f) == 2 && f[0] == "go":
				wants = append(wants, toolWant{"go", f[1], name + " go directive", true, nil})
			case (name == "go.mod" || name == "go.work") && len(f) == 2 && f[0] == "toolchain":
				wants = append(wants, toolWant{"go", strings.TrimPrefix(f[1], "go"), name + " toolchain directive", false, nil})
			case name == ".tool-versions" && len(f) >= 2 && !strings.HasPrefix(f[0], "#"):
				wants = append(wants, toolWant{f[0], f[1], ".tool-versions", false, nil})
			case name == ".nvmrc" && len(f) == 1:
				wants = append(wants, toolWant{"node", f[0], ".nvmrc", false, nil})
			}
		}
	}
	return wants
}

// blueprintVersions are the node's own pins, in name order.
func (p *Parity) blueprintVersions() []toolWant {
	names := make([]string, 0, len(p.tools))
	for t := range p.tools {
		names = append(names, t)
	}
	sort.Strings(names)
	wants := make([]toolWant, 0, len(names))
	for _, t := range names {
		wants = append(wants, toolWant{t, p.tools[t], "blueprint", false, nil})
	}
	return wants
}

// mismatch says how the box's version output differs from the pin, or "".
func (wt toolWant) mismatch(where string, exit int, output string) string {
	have, okHave := parseVer(output)
	need, okNeed := parseVer(wt.version)
	switch {
	case exit != 0 || !okHave:
		return fmt.Sprintf("%s %s (%s): not available in %s", wt.tool, wt.version, wt.source, where)
	case !okNeed:
		return fmt.Sprintf("%s: cannot read the version %q (%s)", wt.tool, wt.version, wt.source)
	case wt.minimum && less(have, need):
		return fmt.Sprintf("%s: %s has %s, %s needs at least %s", wt.tool, where, strings.TrimSpace(output), wt.source, wt.version)
	case !wt.minimum && !matches(need, have) && !wt.matchesAlt(have):
		pins := strings.Join(append([]string{wt.version}, wt.anyOf...), " or ")
		return fmt.Sprintf("%s: %s has %s, %s pins %s", wt.tool, where, strings.TrimSpace(output), wt.source, pins)
	}
	return ""
}

// matchesAlt reports whether have satisfies one of the other versions.
func (wt toolWant) matchesAlt(have [3]int) bool {
	for _, v := range wt.anyOf {
		if need, ok := parseVer(v); ok && matches(need, have) {
			return true
		}
	}
	return false
}

// goLoadScript asks the box's go command to load the main modules (every
// mode: a -mod the mode forbids, a broken go.work, inconsistent vendoring
// fail here) and, unless Go builds from vendor/, the module graph. The
// whole graph needs the go.mod of every module in it, which Go's graph
// pruning spares a build (terraform: go list -m all failed offline for
// 254 go.mod files after go mod download, while every package and test
// loaded): when it fails, only a module that a package or test under the
// root needs and the box cannot get (a lookup, a checksum, a lock in the
// module cache) fails parity. Only the packages' errors count, not what
// Go says on stderr: a stat cache it cannot write in the host's module
// directory is no failure. It prints the command that failed after a
// \x1e.
const goLoadScript = `go list -m >/dev/null 2>/tmp/sg-parity.err || { printf '\036go list -m\n'; cat /tmp/sg-parity.err; exit 1; }
[ -f vendor/modules.txt ] && exit 0
go list -m all >/dev/null 2>/dev/null && exit 0
go list -e -deps -test -f '{{with .Error}}{{.Err}}{{"\n"}}{{end}}' ./... 2>/dev/null | grep -E 'GOPROXY=off|module lookup disabled|missing go.sum entry|verifying .*module|/pkg/mod/' >/tmp/sg-parity.err || exit 0
printf '\036go list -deps -test ./...\n'; sort -u /tmp/sg-parity.err; exit 1`

// goLoads reports, as mismatches, a go command that cannot load the
// repository's modules in the box: every gate that runs Go would fail for
// a reason no agent can fix, and lint would report no diagnostics.
func goLoads(ctx context.Context, w *workspace.Workspace) ([]string, error) {
	out, err := w.Exec(ctx, goLoadScript, time.Minute)
	if err != nil || out.ExitCode == 0 {
		return nil, err
	}
	text := string(out.Output)
	cmd := "go"
	if _, rest, ok := strings.Cut(text, "\x1e"); ok {
		cmd, text, _ = strings.Cut(rest, "\n")
	}
	msg := fmt.Sprintf("go: `%s` fails in the sandbox, so no Go command can build this repository there:\n%s", cmd, feedback.Tail(strings.TrimSpace(text), 2048))
	// A module the cache lacks shows as a lookup the offline box may not
	// make, or as a lock it cannot take in the host's module directory.
	if strings.Contains(text, "GOPROXY=off") || strings.Contains(text, "module lookup disabled") || strings.Contains(text, "/pkg/mod/") {
		msg += "\nThe box is offline and reads the host's module cache: run `go mod download` in the repository on the host first (or allowlist the module proxy in the blueprint's sandbox)."
	}
	return []string{msg}, nil
}
