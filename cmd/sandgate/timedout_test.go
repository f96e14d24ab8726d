package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// timedOutJournal: the runtime stops gate#1 at its timeout; gate#2 fails
// by its own verdict in words that read like a timeout.
const timedOutJournal = `{"seq":1,"time":"2026-01-02T03:04:05Z","type":"run_started","run_id":"r1","blueprint":"b"}
{"seq":2,"time":"2026-01-02T03:04:05Z","type":"node_started","node":"gate","attempt":1}
{"seq":3,"time":"2026-01-02T03:04:06Z","type":"node_finished","node":"gate","attempt":1,"outcome":"fail","feedback":"node gate timed out after 1s","duration_ms":1000,"timed_out":true,"reason":"node gate timed out after 1s"}
{"seq":4,"time":"2026-01-02T03:04:06Z","type":"edge_taken","node":"gate","edge":"gate.on_fail","to":"gate","count":1}
{"seq":5,"time":"2026-01-02T03:04:06Z","type":"node_started","node":"gate","attempt":2}
{"seq":6,"time":"2026-01-02T03:04:07Z","type":"node_finished","node":"gate","attempt":2,"outcome":"fail","feedback":"node gate timed out after 1s","duration_ms":900}
{"seq":7,"time":"2026-01-02T03:04:07Z","type":"run_finished","status":"failed","kind":"fail","reason":"reached no"}
`

// TestShowSaysTimedOut: sandgate show names the attempt the runtime
// stopped at its timeout by the journal's record, not by its feedback.
func TestShowSaysTimedOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(timedOutJournal), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("show", dir)
	if code != exitOK {
		t.Fatalf("show: %d %s", code, errs)
	}
	for _, want := range []string{`(?m)^gate +1 +timed out +1000 ms`, `(?m)^gate +2 +fail +900 ms`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("show holds no line matching %s:\n%s", want, out)
		}
	}
	code, out, errs = runCLI("show", dir, "--format", "json")
	if code != exitOK || strings.Count(out, `"timed_out": true`) != 1 {
		t.Fatalf("show --format json: %d %s\n%s", code, errs, out)
	}
}

// TestProgressSaysTimedOut: the live progress line of an attempt the
// runtime stopped at its timeout says so.
func TestProgressSaysTimedOut(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true)
	p.Event(runtime.Event{Type: runtime.EvNodeFinished, Node: "gate", Attempt: 1, Outcome: runtime.OutcomeFail, TimedOut: true, DurationMS: 1000})
	p.Event(runtime.Event{Type: runtime.EvNodeFinished, Node: "gate", Attempt: 2, Outcome: runtime.OutcomeFail, DurationMS: 900})
	p.close()
	want := "  ✗ gate           #1 timed out   1000 ms\n  ✗ gate           #2 fail       900 ms\n"
	if buf.String() != want {
		t.Fatalf("progress:\n%q\nwant:\n%q", buf.String(), want)
	}
}
