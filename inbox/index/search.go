package index

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/sandgate/sandgate/inbox/find"
	"github.com/sandgate/sandgate/internal/lines"
)

// taskOf is the first line of a run's task: the "task" input, else the
// first string input (by name) a blueprint takes.
func taskOf(inputs map[string]any) string {
	t, ok := inputs["task"].(string)
	if !ok {
		names := make([]string, 0, len(inputs))
		for k := range inputs {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if s, ok := inputs[k].(string); ok && strings.TrimSpace(s) != "" {
				t = s
				break
			}
		}
	}
	first := lines.First(strings.TrimSpace(t))
	if r := []rune(first); len(r) > 140 {
		first = string(r[:139]) + "…"
	}
	return first
}

// branchOf is the last branch an attempt reported committing to.
func branchOf(v *View) string {
	for i := len(v.Attempts) - 1; i >= 0; i-- {
		if b, ok := v.Attempts[i].Outputs["branch"].(string); ok && b != "" {
			return b
		}
	}
	return ""
}

// failuresOf are the tests failing in each node's last attempt (a test
// gate's outputs.failures): what still fails, not what once did.
func failuresOf(v *View) []string {
	seen := map[string]bool{}
	var out []string
	for i := len(v.Attempts) - 1; i >= 0; i-- {
		a := v.Attempts[i]
		if seen[a.Node] {
			continue
		}
		seen[a.Node] = true
		list, _ := a.Outputs["failures"].([]any)
		for _, f := range list {
			if s, ok := f.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// searchText joins what the search looks in. Fields are separated by NUL
// so a word never matches across two of them.
func searchText(r *Run) string {
	parts := []string{r.ID, r.Status, r.Blueprint, r.Repository, r.Branch, r.Reason, r.inputs, strings.Join(r.Failures, " ")}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		parts = append(parts, k+"="+r.Labels[k])
	}
	return "\x00" + strings.ToLower(strings.Join(parts, "\x00")) + "\x00"
}

// Selection is one page of the runs list.
type Selection struct {
	Runs               []*Run
	Total, Page, Pages int
}

// Select returns the page of runs matching q, sorted as q says.
func Select(all []*Run, q find.Query) Selection {
	words, labels := q.Words(), q.Labels()
	var match []*Run
	for _, r := range all {
		if (q.Status != "" && r.Status != q.Status) || (q.Blueprint != "" && r.Blueprint != q.Blueprint) ||
			!q.InRange(r.Started) || !find.Match(words, r.search) || !find.HasLabels(labels, r.Labels) {
			continue
		}
		match = append(match, r)
	}
	// all is newest first; a stable sort keeps that order among equals.
	if q.Sort != "started" || q.Asc {
		by := sortKey(q.Sort)
		slices.SortStableFunc(match, func(a, b *Run) int {
			if q.Asc {
				return by(a, b)
			}
			return by(b, a)
		})
	}
	from, to, page, pages := find.Paginate(len(match), q.Page, q.PerPage)
	return Selection{Runs: match[from:to], Total: len(match), Page: page, Pages: pages}
}

func sortKey(col string) func(a, b *Run) int {
	switch col {
	case "status":
		return func(a, b *Run) int { return cmp.Compare(a.Status, b.Status) }
	case "run":
		return func(a, b *Run) int { return cmp.Compare(a.ID, b.ID) }
	case "blueprint":
		return func(a, b *Run) int { return cmp.Compare(a.Blueprint, b.Blueprint) }
	case "repository":
		return func(a, b *Run) int { return cmp.Compare(a.Repository, b.Repository) }
	case "duration":
		return func(a, b *Run) int { return cmp.Compare(a.DurationMS, b.DurationMS) }
	case "node_runs":
		return func(a, b *Run) int { return cmp.Compare(a.NodeRuns, b.NodeRuns) }
	case "tokens":
		return func(a, b *Run) int { return cmp.Compare(a.Tokens, b.Tokens) }
	case "cost":
		return func(a, b *Run) int { return cmp.Compare(costOf(a), costOf(b)) }
	}
	return func(a, b *Run) int { return a.Started.Compare(b.Started) }
}

func costOf(r *Run) float64 {
	if r.Cost == nil {
		return -1
	}
	return *r.Cost
}
