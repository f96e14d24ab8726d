package eval

import (
	"fmt"
	"io"
	"sort"
)

// Change is one task whose outcome differs between two reports.
type Change struct {
	ID   string `json:"id"`
	From string `json:"from"` // status in A ("" when absent)
	To   string `json:"to"`   // status in B ("" when absent)
	// Kind is newly_resolved, regressed, or status_changed.
	Kind string `json:"kind"`
}

// Comparison is the difference between report A and report B.
type Comparison struct {
	A, B    Summary  `json:"-"`
	Changes []Change `json:"changes"`
	// Deltas are B minus A for each summary figure.
	Deltas map[string]float64 `json:"deltas"`
}

// Compare compares two reports task by task and in summary.
func Compare(a, b *Report) *Comparison {
	c := &Comparison{A: a.Summary, B: b.Summary, Changes: []Change{}}
	from, to := map[string]string{}, map[string]string{}
	var ids []string
	for _, t := range a.Tasks {
		from[t.ID] = t.Status
		ids = append(ids, t.ID)
	}
	for _, t := range b.Tasks {
		if _, ok := from[t.ID]; !ok {
			ids = append(ids, t.ID)
		}
		to[t.ID] = t.Status
	}
	for _, id := range ids {
		f, t := from[id], to[id]
		if f == t {
			continue
		}
		kind := "status_changed"
		switch {
		case t == StatusResolved:
			kind = "newly_resolved"
		case f == StatusResolved || t == StatusFalsePromotion:
			kind = "regressed"
		}
		c.Changes = append(c.Changes, Change{ID: id, From: f, To: t, Kind: kind})
	}
	sort.SliceStable(c.Changes, func(i, j int) bool { return c.Changes[i].Kind < c.Changes[j].Kind })
	sa, sb := a.Summary, b.Summary
	c.Deltas = map[string]float64{
		"tasks": float64(sb.Tasks - sa.Tasks), "resolved": float64(sb.Resolved - sa.Resolved),
		"resolved_rate": sb.ResolvedRate - sa.ResolvedRate, "handoff_rate": sb.HandoffRate - sa.HandoffRate,
		"false_promotion_rate": sb.FalsePromotionRate - sa.FalsePromotionRate, "invalid": float64(sb.Invalid - sa.Invalid),
		"tokens": float64(sb.Tokens - sa.Tokens), "cost": sb.Cost - sa.Cost,
		"median_duration_ms": float64(sb.MedianDurationMS - sa.MedianDurationMS),
	}
	return c
}

// Table writes the comparison for people.
func (c *Comparison) Table(w io.Writer) {
	fmt.Fprintf(w, "%-22s %12s %12s %12s\n", "metric", "A", "B", "delta")
	row := func(name string, a, b float64, format string) {
		fmt.Fprintf(w, "%-22s %12s %12s %12s\n", name, fmt.Sprintf(format, a), fmt.Sprintf(format, b), fmt.Sprintf("%+"+format[1:], b-a))
	}
	row("tasks", float64(c.A.Tasks), float64(c.B.Tasks), "%.0f")
	row("resolved", float64(c.A.Resolved), float64(c.B.Resolved), "%.0f")
	row("resolved_rate", 100*c.A.ResolvedRate, 100*c.B.ResolvedRate, "%.1f")
	row("handoff_rate", 100*c.A.HandoffRate, 100*c.B.HandoffRate, "%.1f")
	row("false_promotion_rate", 100*c.A.FalsePromotionRate, 100*c.B.FalsePromotionRate, "%.1f")
	row("invalid", float64(c.A.Invalid), float64(c.B.Invalid), "%.0f")
	row("tokens", float64(c.A.Tokens), float64(c.B.Tokens), "%.0f")
	row("cost", c.A.Cost, c.B.Cost, "%.4f")
	row("median_duration_ms", float64(c.A.MedianDurationMS), float64(c.B.MedianDurationMS), "%.0f")
	fmt.Fprintln(w, "(rates in %)")
	if len(c.Changes) == 0 {
		fmt.Fprintln(w, "\nno task changed status")
		return
	}
	fmt.Fprintf(w, "\n%-16s %-24s %-16s %-16s\n", "change", "task", "A", "B")
	for _, ch := range c.Changes {
		fmt.Fprintf(w, "%-16s %-24s %-16s %-16s\n", ch.Kind, ch.ID, orDash(ch.From), orDash(ch.To))
	}
}
