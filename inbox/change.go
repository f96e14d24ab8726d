package inbox

import (
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
		if ext := path.Ext(f); ext == ".patch" || ext == ".diff" {
			if v := d.readDiff(f); v != nil {
				v.Name = strings.TrimPrefix(f, path.Dir(f)+"/")
				out = append(out, v)
			}
		}
	}
	return out
}
