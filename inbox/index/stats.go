package index

import (
	"cmp"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// StatsQuery selects the runs `sandgate stats` aggregates.
type StatsQuery struct {
	// Since keeps runs started at or after it (zero: all).
	Since     time.Time
	Blueprint string
	// Top bounds each ranked list (default 5).
	Top int
}

// Stats is what a team watches across runs. Rates are fractions of the
// finished runs (running ones are counted apart).
type Stats struct {
	Runs           int     `json:"runs"`
	Finished       int     `json:"finished"`
	Running        int     `json:"running"`
	Succeeded      int     `json:"succeeded"`
	HandedOff      int     `json:"handed_off"`
	Failed         int     `json:"failed"`
	Canceled       int     `json:"canceled"`
	SuccessRate    float64 `json:"success_rate"`
	HandoffRate    float64 `json:"handoff_rate"`
	FailureRate    float64 `json:"failure_rate"`
	MedianMS       int64   `json:"median_ms"`
	P90MS          int64   `json:"p90_ms"`
	Tokens         int     `json:"tokens"`
	Cost           float64 `json:"cost"`
	CostPerSuccess float64 `json:"cost_per_success"`
	HandoffReasons []Count `json:"handoff_reasons"`
	FailingNodes   []Count `json:"failing_nodes"`
	Flaky          []Count `json:"flaky"`
}

// Count is one ranked entry: a hand-off reason ("kind: reason"), a node
// that failed ("node (type)") or a flaky test.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// ComputeStats aggregates runs (as Index.Runs returns them); it reads no
// files.
func ComputeStats(runs []*Run, q StatsQuery) *Stats {
	s := &Stats{}
	reasons, fails, flaky := map[string]int{}, map[string]int{}, map[string]int{}
	var durations []int64
	for _, r := range runs {
		if (!q.Since.IsZero() && r.Started.Before(q.Since)) || (q.Blueprint != "" && r.Blueprint != q.Blueprint) {
			continue
		}
		s.Runs++
		s.Tokens += r.Tokens
		if r.Cost != nil {
			s.Cost += *r.Cost
		}
		for n, c := range r.Fails {
			fails[n] += c
		}
		for _, f := range r.Flaky {
			flaky[f]++
		}
		switch r.Status {
		case "succeeded":
			s.Succeeded++
		case "handed_off":
			s.HandedOff++
			reasons[r.Kind+": "+NormalizeReason(r.Reason)]++
		case "failed":
			s.Failed++
		case "canceled":
			s.Canceled++
		default:
			s.Running++
			continue
		}
		s.Finished++
		durations = append(durations, r.DurationMS)
	}
	if s.Finished > 0 {
		f := float64(s.Finished)
		s.SuccessRate, s.HandoffRate, s.FailureRate = float64(s.Succeeded)/f, float64(s.HandedOff)/f, float64(s.Failed)/f
	}
	if s.Succeeded > 0 {
		s.CostPerSuccess = s.Cost / float64(s.Succeeded)
	}
	slices.Sort(durations)
	s.MedianMS, s.P90MS = percentile(durations, 50), percentile(durations, 90)
	top := cmp.Or(q.Top, 5)
	s.HandoffReasons, s.FailingNodes, s.Flaky = ranked(reasons, top), ranked(fails, top), ranked(flaky, top)
	return s
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted) + 99) / 100
	return sorted[max(i-1, 0)]
}

func ranked(m map[string]int, top int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(b.Count-a.Count, strings.Compare(a.Name, b.Name))
	})
	return out[:min(top, len(out))]
}

var (
	numberRE = regexp.MustCompile(`\$?[0-9]+(\.[0-9]+)?`)
	spaceRE  = regexp.MustCompile(`\s+`)
)

// NormalizeReason makes reasons that differ only in counts, amounts and
// run-specific numbers compare equal: numbers become N, the text is cut
// to its first line and 100 characters.
func NormalizeReason(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = spaceRE.ReplaceAllString(numberRE.ReplaceAllString(s, "N"), " ")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strings.TrimSpace(s)
}

// failsAndFlaky counts a run's failed attempts by node and type (the
// types from its blueprint.yaml, read only when something failed) and
// gathers the flaky tests its test gates reported.
func failsAndFlaky(r *os.Root, name string, v *View) (map[string]int, []string) {
	var fails map[string]int
	var flaky []string
	for _, a := range v.Attempts {
		if list, ok := a.Outputs["flaky"].([]any); ok {
			for _, f := range list {
				if s, ok := f.(string); ok {
					flaky = append(flaky, s)
				}
			}
		}
		if a.Outcome == "fail" || a.Error != "" {
			if fails == nil {
				fails = map[string]int{}
			}
			fails[a.Node]++
		}
	}
	if fails == nil {
		return nil, flaky
	}
	var bp struct {
		Nodes map[string]struct {
			Type string `yaml:"type"`
		} `yaml:"nodes"`
	}
	if b, _, err := ReadCapped(r, name+"/blueprint.yaml", 4<<20); err == nil {
		_ = yaml.Unmarshal(b, &bp)
	}
	typed := make(map[string]int, len(fails))
	for node, n := range fails {
		typed[node+" ("+cmp.Or(bp.Nodes[node].Type, "?")+")"] += n
	}
	return typed, flaky
}
