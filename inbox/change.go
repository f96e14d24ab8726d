package inbox

import (
	"crypto/sha256"
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
// *.diff: what it proposed or changed), while budget lasts (each is
// spent from it; the files stay linked either way).
func (d *runDir) attemptDiffs(files []string, budget *int) []*diffView {
	var out []*diffView
	for _, f := range files {
		if path.Base(f) == candidateDiff {
			continue // in the change section, by attempt
		}
		if ext := path.Ext(f); (ext == ".patch" || ext == ".diff") && *budget > 0 {
			if st, err := d.Stat(f); err == nil {
				*budget -= int(min(st.Size(), diffCap))
			}
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
// tree, so one diff) were shown. Diff is nil when the page's budget was
// spent on newer candidates: then the page links File.
type candidateView struct {
	Judged []string
	Diff   *diffView
	File   string
}

// candidatesBudget is how many bytes of candidate diffs one run page
// shows. The agent chooses each candidate's size: 16 attempts of 2 MiB
// made a 92 MiB page (782 MiB allocated to build it at each view).
const candidatesBudget = 3 << 20

// candidates are the run's candidates in attempt order, consecutive gate
// attempts that judged the same diff folded into one; the newest are
// drawn until candidatesBudget is spent (the newest always), the older
// ones are links.
func (d *runDir) candidates(v *index.View) []candidateView {
	var out []candidateView
	var sizes []int
	var last [sha256.Size]byte
	for _, a := range v.Attempts {
		name := fmt.Sprintf("nodes/%s/%d/%s", a.Node, a.N, candidateDiff)
		if !index.ValidRel(name) {
			continue
		}
		raw, _, err := index.ReadCapped(d.Root, name, diffCap)
		if err != nil || len(raw) == 0 {
			continue
		}
		who, sum := fmt.Sprintf("%s #%d", a.Node, a.N), sha256.Sum256(raw)
		if len(out) > 0 && sum == last {
			out[len(out)-1].Judged = append(out[len(out)-1].Judged, who)
			continue
		}
		out, sizes, last = append(out, candidateView{Judged: []string{who}, File: name}), append(sizes, len(raw)), sum
	}
	budget := candidatesBudget
	for i := len(out) - 1; i >= 0; i-- {
		if budget -= sizes[i]; budget < 0 && i < len(out)-1 {
			break
		}
		if dv := d.readDiff(out[i].File); dv != nil {
			dv.Name = candidateDiff
			out[i].Diff = dv
		}
	}
	return out
}
