package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// soakBP is five sandboxed shell nodes in a chain. Four append one line
// each to soak.txt (the third after a sleep, so kills land mid-node too)
// and the fifth checks the file holds exactly those four lines in order:
// a node that ran twice on one workspace, or an edit lost in a move,
// fails the run.
var soakBP = runfixture.AppendsBP("soak", "soak.txt", soakLines, map[string]string{"c": "sleep 2"})

// soakLines are the lines soak.txt ends with, one a node.
var soakLines = []string{"a", "b", "c", "d"}

// soakNodes are the nodes every finished soak run ran exactly once.
var soakNodes = slices.Concat(soakLines, []string{"check"})

// TestChaosSoak runs N five-node runs in real boxes across three
// `sandgate-temporal worker` processes while a chaos loop SIGKILLs a
// random worker every 2–5 s and starts it again (same --host-id, same
// runs directory) after 0.5–5 s down: a short down time lets the worker
// reopen its runs from disk, a long one (past the runs' 3 s host
// timeout) moves them to another host. It fails if a run is lost (did
// not succeed, or was handed off for any reason but a host loss) or a
// node finished twice in one run's journal.
//
// Environment: SANDGATE_SOAK_RUNS (default 12), SANDGATE_SOAK_PARALLEL
// (runs in flight, default 4), SANDGATE_SOAK_BASELINE=1 runs the same soak
// without chaos first (the throughput ratio side by side), and
// SANDGATE_SOAK_OUT names a JSON file for the figures.
//
// The soak runs on a Temporal server of its own on a SQLite file, which
// it SIGKILLs once, mid-soak, and starts again on the same file and port
// (soakrestart_test.go); SANDGATE_SOAK_SERVER_RESTART=0 keeps the shared
// in-memory server and restarts nothing.
func TestChaosSoak(t *testing.T) {
	n, par := envInt(t, "SANDGATE_SOAK_RUNS", 12), envInt(t, "SANDGATE_SOAK_PARALLEL", 4)
	restart := soakServer(t)
	c := dial(t)
	repo := gitRepo(t)
	out := soakReport{Runs: n, Parallel: par, ServerRestarts: 0,
		ServerRestartNote: "not asked: SANDGATE_SOAK_SERVER_RESTART=0"}
	if os.Getenv("SANDGATE_SOAK_BASELINE") == "1" {
		calm := soak(t, c, repo, "soak-calm", n, par, false, nil)
		out.Baseline = &calm
	}
	out.Chaos = soak(t, c, repo, "soak-chaos", n, par, true, restart)
	if restart != nil {
		out.ServerRestarts, out.ServerRestartNote = restartNote(out.Chaos.ServerRestart)
	}
	if out.Baseline != nil && out.Baseline.RunsPerMinute > 0 {
		out.ThroughputRatio = out.Chaos.RunsPerMinute / out.Baseline.RunsPerMinute
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	t.Logf("soak figures:\n%s", b)
	if f := os.Getenv("SANDGATE_SOAK_OUT"); f != "" {
		if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := out.Chaos.ServerRestart; r != nil && r.Error != "" {
		t.Errorf("server restart: %s", r.Error)
	}
	for _, s := range []*soakFigures{out.Baseline, &out.Chaos} {
		if s == nil {
			continue
		}
		if s.Lost > 0 {
			t.Errorf("%s: %d of %d runs lost: %s", s.Mode, s.Lost, n, strings.Join(s.LostRuns, "; "))
		}
		if s.Duplicated > 0 {
			t.Errorf("%s: nodes finished twice: %s", s.Mode, strings.Join(s.DuplicatedNodes, "; "))
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// soakRun is one run's end as the soak saw it.
type soakRun struct {
	id     string
	st     temporal.Status
	err    error
	events []runtime.Event
	// jerr: the run ended but its journal could not be read.
	jerr error
}

// soak starts n runs on queue, par at a time, across three fresh worker
// processes, with the chaos loop on or off, and returns its figures.
func soak(t *testing.T, c client.Client, repo, queue string, n, par int, chaos bool, restart *soakRestart) soakFigures {
	hosts := []string{queue + "-1", queue + "-2", queue + "-3"}
	runsDirs, workers := map[string]string{}, map[string]*proc{}
	for _, h := range hosts {
		runsDirs[h] = t.TempDir()
		workers[h] = binWorker(t, queue, h, runsDirs[h])
	}
	in := temporal.RunInput{File: "bp.yaml", Source: []byte(soakBP), Repo: repo,
		HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second, HandoffWait: time.Second}
	results := make([]soakRun, n)
	done := make(chan struct{})
	t0 := time.Now()
	go func() { // no t calls here: the test goroutine runs the chaos loop
		defer close(done)
		sem := make(chan struct{}, par)
		var ended atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				results[i] = soakOne(c, queue, fmt.Sprintf("%s-%d-%d", queue, t0.UnixNano(), i), in)
				progress(queue, int(ended.Add(1)), n, t0)
			}()
		}
		wg.Wait()
	}()
	if restart != nil {
		restart.begin(done)
	}
	kills, kl := 0, &killLog{}
	if chaos {
		kills = chaosLoop(t, queue, hosts, runsDirs, workers, done, kl)
	}
	<-done
	f := figures(queue, results, kills, time.Since(t0))
	gaps := kl.fromKill(results)
	f.FromKillP50MS, f.FromKillP99MS = percentile(gaps, 50), percentile(gaps, 99)
	logTimelines(t, c, results, kl)
	if restart != nil {
		f.ServerRestart = restart.figures(results)
	}
	return f
}

// progress says how far a long soak (100 runs or more) is, every tenth of
// its runs, on stderr: a 1,000-run soak takes most of an hour.
func progress(queue string, ended, n int, t0 time.Time) {
	if n >= 100 && ended%(n/10) == 0 {
		fmt.Fprintf(os.Stderr, "soak %s: %d of %d runs ended, %s\n", queue, ended, n, time.Since(t0).Round(time.Second))
	}
}

// chaosLoop kills a random worker every 2–5 s and starts it again after
// 0.5–5 s, until done; it returns the number of kills. One worker at most
// is down at a time.
func chaosLoop(t *testing.T, queue string, hosts []string, runsDirs map[string]string, workers map[string]*proc, done chan struct{}, kl *killLog) int {
	kills := 0
	pause := func(lo, hi time.Duration) bool {
		select {
		case <-done:
			return false
		case <-time.After(lo + rand.N(hi-lo)):
			return true
		}
	}
	for pause(2*time.Second, 5*time.Second) {
		h := hosts[rand.N(len(hosts))]
		if err := workers[h].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-workers[h].done
		kills++
		k := kl.killed(h)
		down := pause(500*time.Millisecond, 5*time.Second)
		serverGate.RLock()
		workers[h] = binWorker(t, queue, h, runsDirs[h])
		serverGate.RUnlock()
		kl.up(k)
		if !down {
			break
		}
	}
	return kills
}

// soakOne starts one run and waits for its end (up to 4 minutes: a
// run that never ends counts as lost, with where it stands) and reads
// its journal.
func soakOne(c client.Client, queue, id string, in temporal.RunInput) soakRun {
	r := soakRun{id: id}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wr, err := temporal.Start(ctx, c, queue, id, "bp", in)
	if err == nil {
		if err = wr.Get(ctx, &r.st); err != nil {
			err = fmt.Errorf("%w; %s", err, stuck(c, id))
		}
	}
	if err != nil {
		r.err = err
		return r
	}
	r.events, r.jerr = runtime.ReadJournal(filepath.Join(r.st.Dir, "events.jsonl"))
	return r
}

// stuck says where a run that did not end stands: its status and its
// pending activities.
func stuck(c client.Client, id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := temporal.QueryRun(ctx, c, id)
	out := fmt.Sprintf("status %+v (query: %v)", st, err)
	d, err := c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		return out + "; describe: " + err.Error()
	}
	for _, a := range d.RawResponse.GetPendingActivities() {
		out += fmt.Sprintf("; pending %s state %s attempt %d last worker %s failure %q",
			a.GetActivityType().GetName(), a.GetState(), a.GetAttempt(), a.GetLastWorkerIdentity(), a.GetLastFailure().GetMessage())
	}
	return out
}
