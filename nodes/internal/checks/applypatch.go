package checks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/wspath"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// ApplyPatch applies a unified diff to the workspace, or in preview mode
// only writes it down for a person to read (proposal versus apply).
type ApplyPatch struct {
	preview bool
}

var _ runtime.Node = (*ApplyPatch)(nil)

func newApplyPatch(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[ApplyPatchConfig](spec)
	if err != nil {
		return nil, err
	}
	return &ApplyPatch{preview: c.Preview}, nil
}

// patchPath checks a path named by a patch (see wspath.Clean).
func patchPath(p string) (string, error) {
	return wspath.Clean(p)
}

// Run implements runtime.Node.
func (a *ApplyPatch) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	text, err := in.Render("patch")
	if err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err == nil && len(files) == 0 {
		err = errors.New("the patch holds no file changes")
	}
	if err != nil {
		return reject(fmt.Sprintf("the patch does not parse: %v", err)), nil
	}
	if why := rawHeaderProblem(text); why != "" {
		return reject("the patch is refused: " + why), nil
	}
	gitFormat := strings.Contains(text, "diff --git ")
	for _, f := range files {
		if !gitFormat {
			stripPrefixes(f)
		}
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if _, err := patchPath(name); err != nil {
				return reject("the patch is refused: " + err.Error()), nil
			}
		}
	}
	if a.preview {
		if err := in.WriteFile("proposal.diff", []byte(text)); err != nil {
			return nil, err
		}
		return &runtime.Result{Outcome: runtime.OutcomePass, Artifacts: []string{"proposal.diff"},
			Feedback: "Proposal written for review; nothing was applied.", Outputs: map[string]any{"files": len(files)}}, nil
	}
	for _, f := range files {
		if res, err := applyFile(ctx, w, f); err != nil || res != nil {
			return res, err
		}
	}
	return &runtime.Result{Outcome: runtime.OutcomePass, Outputs: map[string]any{"files": len(files)}}, nil
}

// rawHeaderProblem checks the ---/+++ header lines as written: the diff
// library keeps only one name per file, and a refused name must not slip
// through by being the one it drops.
func rawHeaderProblem(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "+++ ") {
			continue
		}
		name, _, _ := strings.Cut(line[4:], "\t")
		name = strings.TrimSpace(name)
		if name == "/dev/null" {
			continue
		}
		if strings.HasPrefix(name, "a/") || strings.HasPrefix(name, "b/") {
			name = name[2:]
		}
		if _, err := patchPath(name); err != nil {
			return err.Error()
		}
	}
	return ""
}

// stripPrefixes removes the a/ and b/ prefixes of traditional unified
// diffs (patch -p1); git-format patches arrive without them.
func stripPrefixes(f *gitdiff.File) {
	for _, n := range []*string{&f.OldName, &f.NewName} {
		if strings.HasPrefix(*n, "a/") || strings.HasPrefix(*n, "b/") {
			*n = (*n)[2:]
		}
	}
}

func reject(why string) *runtime.Result {
	return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: why, Reason: why, Outputs: map[string]any{"files": 0}}
}

// pathGuard makes a box script refuse paths that resolve outside /work,
// such as a planted symlink.
const pathGuard = `for p in "$@"; do case "$(readlink -m -- "$p")" in /work/*) ;; *) echo "$p resolves outside the workspace" >&2; exit 90;; esac; done; `

// applyFile applies one file's hunks inside the box; a conflict returns a
// failing result naming the hunk.
func applyFile(ctx context.Context, w *workspace.Workspace, f *gitdiff.File) (*runtime.Result, error) {
	oldP, newP := sandbox.WorkDir+"/"+path.Clean(f.OldName), sandbox.WorkDir+"/"+path.Clean(f.NewName)
	var src []byte
	if !f.IsNew {
		res, err := w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", pathGuard + `cat -- "$1"`, "sh", oldP}, Timeout: time.Minute})
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			return reject(fmt.Sprintf("%s: %s", f.OldName, strings.TrimSpace(string(res.Output)))), nil
		}
		src = res.Output
	}
	if f.IsDelete {
		res, err := w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", pathGuard + `rm -f -- "$1"`, "sh", oldP}, Timeout: time.Minute})
		if err != nil || res.ExitCode != 0 {
			return reject(fmt.Sprintf("%s: cannot delete", f.OldName)), err
		}
		return nil, nil
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(src), f); err != nil {
		var ae *gitdiff.ApplyError
		where := ""
		if errors.As(err, &ae) {
			where = fmt.Sprintf(" (hunk %d, line %d of the hunk, line %d of the file)", ae.Fragment, ae.FragmentLine, ae.Line)
		}
		hunk := ""
		if ae != nil && ae.Fragment > 0 && ae.Fragment <= len(f.TextFragments) {
			hunk = "\n" + f.TextFragments[ae.Fragment-1].String()
		}
		return reject(fmt.Sprintf("%s: the patch does not apply%s: %v%s", f.NewName, where, err, hunk)), nil
	}
	script := pathGuard + `mkdir -p -- "$(dirname -- "$2")" && cat > "$2"`
	if f.IsRename {
		script += ` && rm -f -- "$1"`
	}
	res, err := w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", script, "sh", oldP, newP}, Stdin: out.Bytes(), Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return reject(fmt.Sprintf("%s: %s", f.NewName, strings.TrimSpace(string(res.Output)))), nil
	}
	if f.NewMode&0o111 != 0 {
		_, _ = w.Exec(ctx, "chmod +x -- "+command.Quote(newP), time.Minute)
	}
	return nil, nil
}
