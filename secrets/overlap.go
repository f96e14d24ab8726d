package secrets

import (
	"sort"
	"strings"
)

// occurrence is where one form occurs in a text.
type occurrence struct {
	start, end int
	marker     string
}

// replaceForms masks the union of every occurrence of every form in s,
// overlapping ones included: occurrences that share a byte merge into one
// run, replaced by the marker of the run's first occurrence (of those
// that start there, the longest). Where no two occurrences overlap, or
// one only contains another, this is what replacing each occurrence from
// left to right, longest first, gives.
func (st *state) replaceForms(s string) string {
	var occs []occurrence
	for _, f := range st.forms {
		for i := 0; i+len(f.text) <= len(s); {
			j := strings.Index(s[i:], f.text)
			if j < 0 {
				break
			}
			occs = append(occs, occurrence{i + j, i + j + len(f.text), f.marker})
			i += j + 1
		}
	}
	if len(occs) == 0 {
		return s
	}
	sort.SliceStable(occs, func(a, b int) bool {
		if occs[a].start != occs[b].start {
			return occs[a].start < occs[b].start
		}
		return occs[a].end > occs[b].end
	})
	var b strings.Builder
	at, run := 0, occs[0]
	for _, o := range occs[1:] {
		if o.start < run.end {
			run.end = max(run.end, o.end)
			continue
		}
		b.WriteString(s[at:run.start])
		b.WriteString(run.marker)
		at, run = run.end, o
	}
	b.WriteString(s[at:run.start])
	b.WriteString(run.marker)
	b.WriteString(s[run.end:])
	return b.String()
}
