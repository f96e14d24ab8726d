package integration

import (
	"os"
	"sync"
	"testing"
	"time"
)

// soakRestartAfter is how far into the chaos soak the server is killed:
// the default soak (12 runs) takes about 40 s, so this is mid-soak with
// every worker busy.
const soakRestartAfter = 12 * time.Second

// serverGate is held (write) while the soak's server is down: a worker
// started then would exit 2 at once (sandgate-temporal worker does not
// wait for a server that is not there, TestBinaryMissingServer), so the
// chaos loop starts its workers under a read lock.
var serverGate sync.RWMutex

// soakRestart restarts the soak's file-backed server once, mid-soak, and
// says what it cost.
type soakRestart struct {
	s        *fileServer
	killedAt time.Time
	down     time.Duration
	err      error
	done     chan struct{}
}

// restartFigures is what a server restart cost the soak.
type restartFigures struct {
	// DownMS: SIGKILL to the restarted server answering.
	DownMS int64 `json:"server_down_ms"`
	// StallAllMS: around the kill, the longest time no run journaled
	// anything (every run stalled at once).
	StallAllMS int64 `json:"all_runs_stalled_ms"`
	// InFlight is the runs with events both before and after the kill;
	// StallP50MS and StallMaxMS their gap across it (last event before,
	// first after).
	InFlight   int    `json:"runs_in_flight_across_restart"`
	StallP50MS int64  `json:"run_stall_p50_ms"`
	StallMaxMS int64  `json:"run_stall_max_ms"`
	Error      string `json:"error,omitempty"`
}

// soakServer starts a file-backed server for the soak and points the
// soak's clients and workers at it, unless SANDGATE_SOAK_SERVER_RESTART=0
// (then the soak keeps the shared in-memory server and restarts
// nothing: nil).
func soakServer(t *testing.T) *soakRestart {
	if os.Getenv("SANDGATE_SOAK_SERVER_RESTART") == "0" {
		return nil
	}
	s := startFileServer(t)
	s.use(t)
	return &soakRestart{s: s, done: make(chan struct{})}
}

// begin kills and restarts the server soakRestartAfter from now, unless
// the soak ends first (stop closes).
func (r *soakRestart) begin(stop <-chan struct{}) {
	go func() {
		defer close(r.done)
		select {
		case <-stop:
			return
		case <-time.After(soakRestartAfter):
		}
		serverGate.Lock()
		defer serverGate.Unlock()
		r.killedAt = time.Now()
		r.down, r.err = r.s.restart()
	}()
}

// figures waits for the restart and measures it against the runs.
func (r *soakRestart) figures(runs []soakRun) *restartFigures {
	<-r.done
	if r.killedAt.IsZero() {
		return nil
	}
	f := &restartFigures{DownMS: r.down.Milliseconds()}
	if r.err != nil {
		f.Error = r.err.Error()
	}
	var lastBefore, firstAfter time.Time
	var stalls []time.Duration
	for _, run := range runs {
		var before, after time.Time
		for _, ev := range run.events {
			if ev.Time.Before(r.killedAt) {
				before = ev.Time
			} else if after.IsZero() {
				after = ev.Time
			}
		}
		if before.After(lastBefore) {
			lastBefore = before
		}
		if !after.IsZero() && (firstAfter.IsZero() || after.Before(firstAfter)) {
			firstAfter = after
		}
		if !before.IsZero() && !after.IsZero() {
			stalls = append(stalls, after.Sub(before))
		}
	}
	if !lastBefore.IsZero() && !firstAfter.IsZero() {
		f.StallAllMS = firstAfter.Sub(lastBefore).Milliseconds()
	}
	f.InFlight = len(stalls)
	f.StallP50MS = percentile(stalls, 50)
	f.StallMaxMS = percentile(stalls, 100)
	return f
}

// restartNote is the report's restart count and note.
func restartNote(f *restartFigures) (int, string) {
	switch {
	case f == nil:
		return 0, "not done: the soak ended before the restart was due"
	case f.Error != "":
		return 1, "restart failed: " + f.Error
	}
	return 1, "SIGKILLed mid-soak and started again on the same SQLite file and port"
}
