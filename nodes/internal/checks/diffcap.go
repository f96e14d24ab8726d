package checks

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// DiffCap fails when the change against the base commit is too large.
type DiffCap struct {
	maxLines, maxFiles, maxBytes int
	exclude                      []string
}

var _ runtime.Node = (*DiffCap)(nil)

func newDiffCap(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[DiffCapConfig](spec)
	if err != nil {
		return nil, err
	}
	d := &DiffCap{maxLines: deref(c.MaxLines), maxFiles: deref(c.MaxFiles), maxBytes: deref(c.MaxBytes), exclude: c.Exclude}
	return d, nil
}

// matchGlob matches slash paths against a glob; "**/" matches any
// directory prefix and a pattern without a slash matches the base name.
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

// Run implements runtime.Node. It sizes the change from the change list
// and the base blobs, so binary files count too.
func (d *DiffCap) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, err := workspace.Of(in)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	changes, err := w.Changes()
	if err != nil {
		return nil, err
	}
	// The fingerprint reads (and pins) the very listing measured below.
	fp, err := w.FingerprintOf(changes)
	if err != nil {
		return nil, err
	}
	files, ignored, err := d.measure(ctx, w, changes)
	if err != nil {
		return nil, err
	}
	t := diffTotals(files)
	res := &runtime.Result{Outputs: map[string]any{"lines": t.add + t.del, "added": t.add, "deleted": t.del,
		"files": len(files), "bytes": t.bytes, "binary": t.binary, "ignored": ignored}}
	over := d.over(t, len(files))
	if total, max := workspace.ChangeBytes(changes), w.ChangeCap(); total > max {
		over = append(over, fmt.Sprintf("the change holds %s, over the harness cap of %s that promotion enforces", feedback.HumanBytes(total), feedback.HumanBytes(max)))
	}
	g := verdict.GateResult{Pass: len(over) == 0}
	if !g.Pass {
		g.Reason = strings.Join(over, "; ")
		res.Feedback = diffFeedback(g.Reason, t, files)
	}
	return gate.Finish(in, "diff", fp, start, g, res)
}

// measure sizes every change that would leave the run and is not
// excluded: files git would ignore are not committed (see promoted), so
// they do not count; ignored reports how many there were. Over the
// harness's cap nothing is read (the sizes alone fail the gate), and that
// cap counts every file the box changed, as promotion does.
func (d *DiffCap) measure(ctx context.Context, w *workspace.Workspace, changes []sandbox.Change) ([]gitstore.FileSize, int, error) {
	p, err := w.Promotion()
	if err != nil {
		return nil, 0, err
	}
	read := workspace.ChangeBytes(changes) <= w.ChangeCap()
	kept, ignored, err := p.Promoted(changes)
	if err != nil {
		return nil, 0, err
	}
	var files []gitstore.FileSize
	for _, c := range kept {
		if matchAny(d.exclude, c.Path) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		f := gitstore.FileSize{Name: c.Path, Bytes: c.Size}
		if read {
			if f, err = p.Measure(c); err != nil {
				return nil, 0, err
			}
		}
		files = append(files, f)
	}
	return files, len(ignored), nil
}

// diffTotal sums the measured files.
type diffTotal struct {
	add, del, binary int
	bytes            int64
}

func diffTotals(files []gitstore.FileSize) diffTotal {
	var t diffTotal
	for _, f := range files {
		t.add, t.del, t.bytes = t.add+f.Add, t.del+f.Del, t.bytes+f.Bytes
		if f.Binary {
			t.binary++
		}
	}
	return t
}

// over lists the caps the change exceeds, with the numbers.
func (d *DiffCap) over(t diffTotal, files int) []string {
	var over []string
	if lines := t.add + t.del; d.maxLines > 0 && lines > d.maxLines {
		over = append(over, fmt.Sprintf("%d changed lines, cap %d", lines, d.maxLines))
	}
	if d.maxFiles > 0 && files > d.maxFiles {
		over = append(over, fmt.Sprintf("%d changed files (%d binary), cap %d", files, t.binary, d.maxFiles))
	}
	if d.maxBytes > 0 && t.bytes > int64(d.maxBytes) {
		over = append(over, fmt.Sprintf("%d changed bytes (%s), cap %d", t.bytes, feedback.HumanBytes(t.bytes), d.maxBytes))
	}
	return over
}

// diffFeedback tells the agent what is too large and where.
func diffFeedback(reason string, t diffTotal, files []gitstore.FileSize) string {
	sort.SliceStable(files, func(i, j int) bool {
		if files[i].Lines() != files[j].Lines() {
			return files[i].Lines() > files[j].Lines()
		}
		return files[i].Bytes > files[j].Bytes
	})
	var b strings.Builder
	fmt.Fprintf(&b, "The change is too large: %s (%d lines added, %d deleted, %d binary files, %s). Make a smaller change: edit only what the task needs, prefer exact small edits to rewriting files, and do not add build outputs or binaries.\nLargest files:\n",
		reason, t.add, t.del, t.binary, feedback.HumanBytes(t.bytes))
	for i, f := range files {
		if i == 5 {
			break
		}
		if f.Binary {
			fmt.Fprintf(&b, "  %s: binary, %s\n", f.Name, feedback.HumanBytes(f.Bytes))
		} else {
			fmt.Fprintf(&b, "  %s: +%d -%d (%s)\n", f.Name, f.Add, f.Del, feedback.HumanBytes(f.Bytes))
		}
	}
	return b.String()
}
