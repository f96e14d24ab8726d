package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// TestProgressFromTheStart: in a log (no terminal) every step says when
// it starts, and the notes of long steps — the workspace's snapshot and
// box, CI's clean box — come out as they happen, each on its own line.
func TestProgressFromTheStart(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true)
	p.Note(runtime.Note{RunID: "r1", Text: "setting up the workspace"})
	p.Note(runtime.Note{RunID: "r1", Text: "snapshot of HEAD (taken once per commit, then shared)"})
	p.Event(runtime.Event{Type: runtime.EvRunStarted, RunID: "r1", Blueprint: "b"})
	p.Event(runtime.Event{Type: runtime.EvNodeStarted, Node: "ci", Attempt: 1})
	p.Note(runtime.Note{Node: "ci", Attempt: 1, Text: "snapshot of the pushed commit 0123456789ab and a clean box for CI\nsecond line"})
	p.Event(runtime.Event{Type: runtime.EvNodeFinished, Node: "ci", Attempt: 1, Outcome: runtime.OutcomePass, DurationMS: 5})
	p.close()
	want := []string{
		"run r1: setting up the workspace",
		"run r1: snapshot of HEAD (taken once per commit, then shared)",
		"run r1: b",
		"  … ci             #1 started",
		"  … ci #1: snapshot of the pushed commit 0123456789ab and a clean box for CI",
		"  ✓ ci             #1 pass         5 ms",
	}
	if got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("progress:\n%s\nwant:\n%s", buf.String(), strings.Join(want, "\n"))
	}
}

// TestProgressNoteOnTTY: on a terminal a note replaces the running line
// and the running line comes back after it.
func TestProgressNoteOnTTY(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	p := &progress{w: &buf, enabled: true, tty: true, start: map[string]time.Time{},
		now:       func() time.Time { return now },
		newTicker: func() (<-chan time.Time, func()) { return make(chan time.Time), func() {} }}
	p.Event(runtime.Event{Type: runtime.EvNodeStarted, Node: "ci", Attempt: 1})
	now = now.Add(3 * time.Second)
	p.Note(runtime.Note{Node: "ci", Attempt: 1, Text: "a clean box for CI"})
	p.close()
	want := "  … ci             #1 running\r\033[K  … ci #1: a clean box for CI\n  … running ci#1 3s"
	if !strings.HasSuffix(buf.String(), want) {
		t.Fatalf("progress on a terminal: %q, want it to end %q", buf.String(), want)
	}
}
