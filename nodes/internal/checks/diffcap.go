package checks

import (
	"context"
	"fmt"
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
	exclude                      excludeList
}

var _ runtime.Node = (*DiffCap)(nil)

func newDiffCap(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[DiffCapConfig](spec)
	if err != nil {
		return nil, err
	}
	ex, err := parseExclude(c.Exclude)
	if err != nil {
		return nil, err
	}
	d := &DiffCap{maxLines: deref(c.MaxLines), maxFiles: deref(c.MaxFiles), maxBytes: DefaultMaxBytes, exclude: ex}
	if c.MaxBytes != nil {
		d.maxBytes = *c.MaxBytes
	}
	return d, nil
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
	m, err := d.measure(ctx, w, changes)
	if err != nil {
		return nil, err
	}
	t := diffTotals(m.files)
	res := &runtime.Result{Outputs: map[string]any{"lines": t.add + t.del, "added": t.add, "deleted": t.del,
		"files": len(m.files), "bytes": t.bytes, "binary": t.binary, "ignored": m.ignored, "excluded": m.excluded}}
	over := d.over(t, len(m.files))
	if total, max := workspace.ChangeBytes(changes), w.ChangeCap(); total > max {
		over = append(over, fmt.Sprintf("the change holds %s, over the harness cap of %s that promotion enforces", feedback.HumanBytes(total), feedback.HumanBytes(max)))
	}
	g := verdict.GateResult{Pass: len(over) == 0}
	if !g.Pass {
		g.Reason = strings.Join(over, "; ")
		byBytes := d.maxBytes > 0 && t.bytes > int64(d.maxBytes)
		res.Feedback = diffFeedback(g.Reason, t, m, byBytes)
	}
	return gate.Finish(in, "diff", fp, start, g, res)
}

// measured is what diff_cap counted, and what it left out.
type measured struct {
	files []gitstore.FileSize
	// ignored are the files git would ignore; excluded, those exclude
	// names (counted, not measured).
	ignored, excluded int
}

// measure sizes every change that would leave the run and is not
// excluded: files git would ignore are not committed (see promoted), so
// they do not count. Over the harness's cap nothing is read (the sizes
// alone fail the gate), and that cap counts every file the box changed,
// as promotion does.
func (d *DiffCap) measure(ctx context.Context, w *workspace.Workspace, changes []sandbox.Change) (measured, error) {
	var m measured
	p, err := w.Promotion()
	if err != nil {
		return m, err
	}
	read := workspace.ChangeBytes(changes) <= w.ChangeCap()
	kept, ignored, err := p.Promoted(changes)
	if err != nil {
		return m, err
	}
	m.ignored = len(ignored)
	for _, c := range kept {
		if d.exclude.excludes(c.Path) {
			m.excluded++
			continue
		}
		if err := ctx.Err(); err != nil {
			return m, err
		}
		f := gitstore.FileSize{Name: c.Path, Bytes: c.Size}
		if read {
			if f, err = p.Measure(c); err != nil {
				return m, err
			}
		}
		m.files = append(m.files, f)
	}
	return m, nil
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

// diffFeedback tells the agent what is too large and where: the largest
// files by bytes when the byte cap is what the change exceeds, else by
// lines.
func diffFeedback(reason string, t diffTotal, m measured, byBytes bool) string {
	files := append([]gitstore.FileSize(nil), m.files...)
	sort.SliceStable(files, func(i, j int) bool {
		a, b := [2]int64{int64(files[i].Lines()), files[i].Bytes}, [2]int64{int64(files[j].Lines()), files[j].Bytes}
		if byBytes {
			a[0], a[1], b[0], b[1] = a[1], a[0], b[1], b[0]
		}
		return a[0] > b[0] || a[0] == b[0] && a[1] > b[1]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "The change is too large: %s (%d lines added, %d deleted, %d binary files, %s). Make a smaller change: edit only what the task needs, prefer exact small edits to rewriting files, and do not add build outputs or binaries.\nLargest files:\n",
		reason, t.add, t.del, t.binary, feedback.HumanBytes(t.bytes))
	for i, f := range files {
		if i == 5 {
			fmt.Fprintf(&b, "  … and %d more files\n", len(files)-5)
			break
		}
		if f.Binary {
			fmt.Fprintf(&b, "  %s: binary, %s\n", f.Name, feedback.HumanBytes(f.Bytes))
		} else {
			fmt.Fprintf(&b, "  %s: +%d -%d lines (%s)\n", f.Name, f.Add, f.Del, feedback.HumanBytes(f.Bytes))
		}
	}
	if m.excluded > 0 {
		fmt.Fprintf(&b, "(%d files matched exclude and were not counted.)\n", m.excluded)
	}
	return b.String()
}
