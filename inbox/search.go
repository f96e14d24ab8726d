package inbox

import (
	"cmp"
	"maps"
	"slices"

	"github.com/sandgate/sandgate/inbox/find"
)

// sortLink is a column header's link and its arrow, for the template.
type sortLink struct {
	Col, Label, URL, Arrow string
}

func sortLinks(q find.Query) []sortLink {
	labels := map[string]string{"node_runs": "node runs", "started": "age"}
	var out []sortLink
	for _, c := range find.Columns {
		l := sortLink{Col: c, Label: cmp.Or(labels[c], c), URL: q.SortedBy(c).URL()}
		if q.Sort == c {
			l.Arrow = map[bool]string{true: "↑", false: "↓"}[q.Asc]
		}
		out = append(out, l)
	}
	return out
}

// label is one of a run's labels with the list's address for the runs
// that have it, for the template.
type label struct{ Name, Value, URL string }

// labelList is labels in name order.
func labelList(l map[string]string) []label {
	out := make([]label, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, label{Name: k, Value: l[k], URL: find.LabelURL(k, l[k])})
	}
	return out
}
