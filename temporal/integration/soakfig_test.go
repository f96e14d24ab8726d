package integration

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// soakReport is what TestChaosSoak logs and writes to $SANDGATE_SOAK_OUT.
type soakReport struct {
	Runs              int          `json:"runs"`
	Parallel          int          `json:"parallel"`
	ServerRestarts    int          `json:"server_restarts"`
	ServerRestartNote string       `json:"server_restart_note"`
	Baseline          *soakFigures `json:"baseline_no_chaos,omitempty"`
	Chaos             soakFigures  `json:"chaos"`
	// ThroughputRatio is chaos runs/min over the baseline's (when run).
	ThroughputRatio float64 `json:"throughput_ratio,omitempty"`
}

// soakFigures are one soak's counts.
type soakFigures struct {
	Mode     string `json:"mode"`
	Finished int    `json:"runs_finished"`
	Lost     int    `json:"runs_lost"`
	// LostRuns says why each lost run is counted lost.
	LostRuns []string `json:"lost_runs,omitempty"`
	// Duplicated counts nodes with more than one node_finished in one
	// run's journal; DuplicatedNodes names them.
	Duplicated      int      `json:"side_effects_done_twice"`
	DuplicatedNodes []string `json:"duplicated_nodes,omitempty"`
	// HandedOffHostLoss counts runs handed off because a host was lost.
	HandedOffHostLoss int `json:"handed_off_host_loss"`
	WorkerKills       int `json:"worker_kills"`
	// Moves counts run_resumed events saying a host was lost; MovedRuns
	// the runs with at least one.
	Moves     int `json:"moves"`
	MovedRuns int `json:"moved_runs"`
	// Restores counts run_resumed events after a worker refused a
	// workspace a killed attempt had written to (rebuilt from the record).
	Restores int `json:"restores"`
	// AddedP50MS and AddedP99MS: per move or restore, the time from the
	// last event journaled before the host was lost to the run_resumed
	// event (detection, rebuild), in milliseconds.
	AddedP50MS int64 `json:"added_latency_per_host_loss_p50_ms"`
	AddedP99MS int64 `json:"added_latency_per_host_loss_p99_ms"`
	// FromKillP50MS and FromKillP99MS: per move or restore, the time from
	// the chaos loop's kill of the host to the run_resumed event
	// (detection and rebuild only; the figure above also counts the
	// killed attempt's work before the kill).
	FromKillP50MS int64   `json:"kill_to_resumed_p50_ms"`
	FromKillP99MS int64   `json:"kill_to_resumed_p99_ms"`
	WallSeconds   float64 `json:"wall_seconds"`
	RunsPerMinute float64 `json:"runs_per_minute"`
	// RunP50MS and RunP99MS are whole runs' durations (journal start to
	// finish).
	RunP50MS int64 `json:"run_p50_ms"`
	RunP99MS int64 `json:"run_p99_ms"`
	// Unread lists runs whose journal could not be read (not counted
	// for duplicates or moves).
	Unread []string `json:"journals_unread,omitempty"`
	// ServerRestart: the Temporal server's restart mid-soak, if any.
	ServerRestart *restartFigures `json:"server_restart,omitempty"`
}

// figures counts a soak's results.
func figures(mode string, runs []soakRun, kills int, wall time.Duration) soakFigures {
	f := soakFigures{Mode: mode, WorkerKills: kills, WallSeconds: wall.Seconds()}
	var added, whole []time.Duration
	for _, r := range runs {
		if r.err != nil {
			f.Lost++
			f.LostRuns = append(f.LostRuns, fmt.Sprintf("%s: %v", r.id, r.err))
			continue
		}
		if r.jerr != nil || len(r.events) == 0 {
			f.Unread = append(f.Unread, fmt.Sprintf("%s: %v (%s)", r.id, r.jerr, r.st.Note))
		}
		moves, restores, gaps := movesIn(r.events)
		f.Moves += moves
		f.Restores += restores
		added = append(added, gaps...)
		if moves > 0 {
			f.MovedRuns++
		}
		if d := f.duplicates(r); d > 0 {
			f.Duplicated += d
		}
		switch {
		case r.st.Status == runtime.StatusSucceeded:
			f.Finished++
			if len(r.events) == 0 {
				continue
			}
			whole = append(whole, r.events[len(r.events)-1].Time.Sub(r.events[0].Time))
		case r.st.Status == runtime.StatusHandedOff && strings.Contains(r.st.Reason, " lost"):
			f.HandedOffHostLoss++
		default:
			f.Lost++
			f.LostRuns = append(f.LostRuns, fmt.Sprintf("%s: %s %s (%s) on %s", r.id, r.st.Status, r.st.Kind, r.st.Reason, r.st.Host))
		}
	}
	f.AddedP50MS, f.AddedP99MS = percentile(added, 50), percentile(added, 99)
	f.RunP50MS, f.RunP99MS = percentile(whole, 50), percentile(whole, 99)
	if wall > 0 {
		f.RunsPerMinute = float64(f.Finished) / wall.Minutes()
	}
	return f
}

// duplicates counts the nodes of r that finished more than once.
func (f *soakFigures) duplicates(r soakRun) int {
	count := map[string]int{}
	for _, ev := range r.events {
		if ev.Type == runtime.EvNodeFinished {
			count[ev.Node]++
		}
	}
	d := 0
	for _, node := range soakNodes {
		if count[node] > 1 {
			d++
			f.DuplicatedNodes = append(f.DuplicatedNodes, fmt.Sprintf("%s: %s finished %d times", r.id, node, count[node]))
		}
	}
	return d
}

// movesIn counts a journal's moves (run_resumed after a host loss) and
// restores (after a workspace unlike the record), and the gap before each.
func movesIn(events []runtime.Event) (moves, restores int, gaps []time.Duration) {
	for i, ev := range events {
		if ev.Type != runtime.EvRunResumed {
			continue
		}
		switch {
		case strings.Contains(ev.Reason, " lost"):
			moves++
		case strings.Contains(ev.Reason, "is not the recorded one"):
			restores++
		default:
			continue
		}
		if i > 0 {
			gaps = append(gaps, ev.Time.Sub(events[i-1].Time))
		}
	}
	return moves, restores, gaps
}

// percentile is the p-th percentile (nearest rank) in milliseconds, 0
// for none.
func percentile(ds []time.Duration, p int) int64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Milliseconds()
}
