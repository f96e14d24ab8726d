package checks

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Protect fails, or reverts the change, when protected paths changed:
// tests the agent edited are not evidence, CI config is not its to touch.
type Protect struct {
	paths  []string
	revert bool
}

var _ runtime.Node = (*Protect)(nil)

func newProtect(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[ProtectConfig](spec)
	if err != nil {
		return nil, err
	}
	return &Protect{paths: c.Paths, revert: c.Action == "revert"}, nil
}

// Run implements runtime.Node.
func (p *Protect) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	changes, err := w.Changes()
	if err != nil {
		return nil, err
	}
	var hit []string
	for _, c := range changes {
		if matchAny(p.paths, c.Path) {
			hit = append(hit, c.Path)
		}
	}
	res := &runtime.Result{Outputs: map[string]any{"changed": hit}}
	if len(hit) > 0 && p.revert {
		// The harness acts on the run's workspace here; it judges nothing.
		if err := revert(workspace.InRunBox(ctx), w, hit); err != nil {
			return nil, err
		}
		res.Feedback = "Reverted changes to protected files (they are not yours to change): " + strings.Join(hit, ", ")
		hit = nil
	}
	fp, err := w.Fingerprint()
	if err != nil {
		return nil, err
	}
	g := verdict.GateResult{Pass: len(hit) == 0}
	if !g.Pass {
		g.Reason = "protected files changed: " + strings.Join(hit, ", ")
		res.Feedback = "You changed files you must not change: " + strings.Join(hit, ", ") + ". Undo those changes and fix the code instead."
	}
	return gate.Finish(in, "protect", fp, start, g, res)
}

// revert restores paths to their base content inside the box.
func revert(ctx context.Context, w *workspace.Workspace, paths []string) error {
	for _, p := range paths {
		orig := filepath.Join(w.Snapshot, filepath.FromSlash(p))
		st, err := os.Lstat(orig)
		target := sandbox.WorkDir + "/" + p
		var res *sandbox.Result
		switch {
		case os.IsNotExist(err):
			res, err = w.Exec(ctx, "rm -rf -- "+command.Quote(target), time.Minute)
		case err != nil:
			return err
		case st.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(orig)
			res, err = w.Exec(ctx, fmt.Sprintf("rm -rf -- %s && ln -s %s %s", command.Quote(target), command.Quote(l), command.Quote(target)), time.Minute)
		default:
			data, rerr := os.ReadFile(orig)
			if rerr != nil {
				return rerr
			}
			script := fmt.Sprintf("rm -rf -- %[1]s && mkdir -p \"$(dirname %[1]s)\" && cat > %[1]s && chmod %[2]o %[1]s", command.Quote(target), st.Mode().Perm())
			res, err = w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", script}, Stdin: data, Timeout: time.Minute})
		}
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return fmt.Errorf("revert %s: %s", p, res.Output)
		}
	}
	// The harness reverted, not the gate's command: the gate's baseline
	// moves so the revert does not count as a write during the gate.
	return gate.Rebase(ctx)
}

// matchGlob matches slash paths against a protect glob; "**/" matches any
// directory prefix and a pattern without a slash matches the base name at
// any depth, as in a .gitignore: a protected name is protected wherever
// it is (diff_cap's exclude, which lets things through, is anchored; see
// excludeList).
func matchGlob(pattern, p string) bool {
	if strings.HasPrefix(pattern, "**/") {
		rest := strings.TrimPrefix(pattern, "**/")
		for s := p; ; {
			if ok, _ := path.Match(rest, s); ok {
				return true
			}
			i := strings.IndexByte(s, '/')
			if i < 0 {
				return false
			}
			s = s[i+1:]
		}
	}
	if strings.HasSuffix(pattern, "/**") {
		return strings.HasPrefix(p, strings.TrimSuffix(pattern, "**"))
	}
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(p))
		return ok
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if matchGlob(pat, p) {
			return true
		}
	}
	return false
}
