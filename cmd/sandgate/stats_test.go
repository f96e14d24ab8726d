package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// writeRun writes a finished run's journal, blueprint and run.json.
func writeRun(t *testing.T, runs, id string, started time.Time, status runtime.Status, kind, reason string, cost float64, attempts ...runtime.Event) {
	t.Helper()
	dir := filepath.Join(runs, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	evs := []runtime.Event{{Type: runtime.EvRunStarted, RunID: id, Blueprint: "fix", Time: started}}
	at := started
	for i, a := range attempts {
		at = at.Add(time.Minute)
		evs = append(evs, runtime.Event{Type: runtime.EvNodeStarted, Node: a.Node, Attempt: i + 1, Time: at})
		a.Type, a.Attempt, a.Time = runtime.EvNodeFinished, i+1, at
		evs = append(evs, a)
	}
	evs = append(evs, runtime.Event{Type: runtime.EvRunFinished, Status: status, Kind: kind, Reason: reason, Time: at.Add(time.Minute)})
	var b bytes.Buffer
	for i, ev := range evs {
		ev.Seq = i + 1
		line, _ := json.Marshal(ev)
		b.Write(append(line, '\n'))
	}
	sum, _ := json.Marshal(map[string]any{"cost": cost, "duration_ms": at.Add(time.Minute).Sub(started).Milliseconds()})
	for name, data := range map[string][]byte{"events.jsonl": b.Bytes(), "run.json": sum,
		"blueprint.yaml": []byte("nodes:\n  implement: {type: agent}\n  test: {type: test}\n  lint: {type: lint}\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func statsRuns(t *testing.T) string {
	runs := t.TempDir()
	t0 := time.Now().Add(-48 * time.Hour).UTC()
	pass := runtime.Event{Node: "implement", Outcome: runtime.OutcomePass, Tokens: 100}
	testFail := runtime.Event{Node: "test", Outcome: runtime.OutcomeFail}
	flaky := runtime.Event{Node: "test", Outcome: runtime.OutcomePass, Outputs: map[string]any{"flaky": []string{"TestRace"}}}
	writeRun(t, runs, "r1", t0, runtime.StatusSucceeded, "succeed", "reached done", 0.50, pass, flaky)
	writeRun(t, runs, "r2", t0.Add(time.Hour), runtime.StatusSucceeded, "succeed", "reached done", 0.25, pass, testFail, pass, flaky)
	writeRun(t, runs, "r3", t0.Add(2*time.Hour), runtime.StatusHandedOff, "edge", "retry edge test.on_fail → implement (max 3) exhausted after 3 attempt(s)", 1.25, pass, testFail, pass, testFail)
	writeRun(t, runs, "r4", t0.Add(3*time.Hour), runtime.StatusHandedOff, "edge", "retry edge test.on_fail → implement (max 2) exhausted after 2 attempt(s)", 0.75, pass, testFail)
	writeRun(t, runs, "r5", t0.Add(4*time.Hour), runtime.StatusHandedOff, "cost", "budget exhausted: $5.0100 spent, budget $5.00", 5.01, pass)
	writeRun(t, runs, "r6", t0.Add(5*time.Hour), runtime.StatusFailed, "node_error", "node lint broke after 1 attempt(s): boom", 0, runtime.Event{Node: "lint", Error: "boom"})
	// Outside --since 7d.
	writeRun(t, runs, "old", t0.Add(-30*24*time.Hour), runtime.StatusFailed, "fail", "reached no", 9, pass)
	return runs
}

func TestStatsGolden(t *testing.T) {
	runs := statsRuns(t)
	var out, errb bytes.Buffer
	if code := cmdStats([]string{"--runs", runs, "--since", "7d"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	golden := filepath.Join("testdata", "stats.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile(golden)
	if out.String() != string(want) {
		t.Fatalf("stats output differs from %s (run with -update to accept):\n%s", golden, out.String())
	}
}

func TestStatsJSON(t *testing.T) {
	runs := statsRuns(t)
	var out, errb bytes.Buffer
	if code := cmdStats([]string{"--runs", runs, "--format", "json", "--blueprint", "fix"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var st struct {
		Runs, Succeeded int
		Cost            float64
		HandoffReasons  []struct {
			Name  string
			Count int
		} `json:"handoff_reasons"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	if bad := notSnakeCase(keys); len(bad) > 0 {
		t.Errorf("stats --format json keys not in snake_case: %v", bad)
	}
	if st.Runs != 7 || st.Succeeded != 2 || fmt.Sprintf("%.2f", st.Cost) != "16.76" {
		t.Fatalf("without --since: %+v", st)
	}
	if len(st.HandoffReasons) == 0 || st.HandoffReasons[0].Count != 2 || !strings.HasPrefix(st.HandoffReasons[0].Name, "edge: retry edge test.on_fail → implement (max N)") {
		t.Fatalf("the two exhausted-edge hand-offs were not folded into one reason: %+v", st.HandoffReasons)
	}
	for _, bad := range [][]string{{"--since", "7x"}, {"--format", "xml"}} {
		if code := cmdStats(append([]string{"--runs", runs}, bad...), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}

// notSnakeCase lists the keys, at any depth, that are not lower_snake_case.
func notSnakeCase(v any) []string {
	var bad []string
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if strings.ToLower(k) != k || strings.ContainsAny(k, " -") {
				bad = append(bad, k)
			}
			bad = append(bad, notSnakeCase(x)...)
		}
	case []any:
		for _, x := range t {
			bad = append(bad, notSnakeCase(x)...)
		}
	}
	return bad
}
