package inbox

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/termtext"
)

// diffView is a unified diff as the page shows it: its files and classed
// lines (terminal escapes in them made visible), cut at diffCap.
type diffView struct {
	Name  string
	Files []string
	Lines []diffLine
	Cut   bool
}

const diffCap = 2 << 20

// readDiff reads a diff file of the run (change.patch, an attempt's
// proposal.diff); nil when there is none.
func (d *runDir) readDiff(name string) *diffView {
	b, cut, err := index.ReadCapped(d.Root, name, diffCap)
	if err != nil || len(b) == 0 {
		return nil
	}
	files, lines := parseDiff(string(b))
	for i := range lines {
		lines[i].Text = termtext.Text(lines[i].Text)
	}
	return &diffView{Name: name, Files: files, Lines: lines, Cut: cut}
}

// attemptDiffs are the diffs an attempt left in its directory (*.patch,
// *.diff: what it proposed or changed).
func (d *runDir) attemptDiffs(files []string) []*diffView {
	var out []*diffView
	for _, f := range files {
		if path.Base(f) == candidateDiff {
			continue // in the change section, by attempt
		}
		if ext := path.Ext(f); ext == ".patch" || ext == ".diff" {
			if v := d.readDiff(f); v != nil {
				v.Name = strings.TrimPrefix(f, path.Dir(f)+"/")
				out = append(out, v)
			}
		}
	}
	return out
}

// candidateDiff is the file a gate attempt leaves with the diff of the
// candidate it judged (nodes/internal/gate's CandidateDiff).
const candidateDiff = "candidate.diff"

// candidateView is the change as it stood at one turn of the run: the
// candidate the gate attempts in Judged (one after another on the same
// tree, so one diff) were shown.
type candidateView struct {
	Judged []string
	Diff   *diffView
}

// candidates are the run's candidates in attempt order, consecutive gate
// attempts that judged the same diff folded into one.
func (d *runDir) candidates(v *index.View) []candidateView {
	var out []candidateView
	var last []byte
	for _, a := range v.Attempts {
		name := fmt.Sprintf("nodes/%s/%d/%s", a.Node, a.N, candidateDiff)
		if !index.ValidRel(name) {
			continue
		}
		raw, _, err := index.ReadCapped(d.Root, name, diffCap)
		if err != nil || len(raw) == 0 {
			continue
		}
		who := fmt.Sprintf("%s #%d", a.Node, a.N)
		if len(out) > 0 && bytes.Equal(raw, last) {
			out[len(out)-1].Judged = append(out[len(out)-1].Judged, who)
			continue
		}
		if dv := d.readDiff(name); dv != nil {
			dv.Name = candidateDiff
			out, last = append(out, candidateView{Judged: []string{who}, Diff: dv}), raw
		}
	}
	return out
}
