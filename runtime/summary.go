package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Summary is a run's verdict and timeline, saved as run.json and printed
// by `sandgate show`. It is derived from the journal alone.
type Summary struct {
	RunID string `json:"run_id"`
	// Blueprint is the blueprint's file; BlueprintName its name: what
	// sandgate runs, the inbox and stats --blueprint show and filter on.
	Blueprint     string    `json:"blueprint"`
	BlueprintName string    `json:"blueprint_name,omitempty"`
	Dir           string    `json:"dir"`
	Workspace     string    `json:"workspace"`
	Status        Status    `json:"status"`
	Kind          string    `json:"kind,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	Started       time.Time `json:"started"`
	DurationMS    int64     `json:"duration_ms"`
	// WorkspaceMS is the part of DurationMS spent setting up the run's
	// workspace (snapshot, box) before its first node, again for each
	// resume and answer.
	WorkspaceMS int64 `json:"workspace_ms,omitempty"`
	// FinishMS is the part of DurationMS spent after the last node
	// finished: stopping nodes, the hand-off diff, closing the box.
	FinishMS int64 `json:"finish_ms,omitempty"`
	NodeRuns int   `json:"node_runs"`
	Tokens   int   `json:"tokens"`
	// Cost is what the run's model calls cost in USD (all attempts,
	// canceled ones and answers included); the inbox reads it as run.json's "cost".
	Cost    float64 `json:"cost"`
	Resumes int     `json:"resumes,omitempty"`
	// Answers are the replies people gave the run after it was handed
	// off, oldest first; Status is that of the latest run_finished.
	Answers  []AnswerInfo  `json:"answers,omitempty"`
	Attempts []AttemptInfo `json:"attempts"`
	// Sandbox lists the isolation layers the run's commands ran under.
	Sandbox []string       `json:"sandbox,omitempty"`
	Inputs  map[string]any `json:"inputs,omitempty"`
	// Labels are the run's labels (RunOptions.Labels).
	Labels Labels `json:"labels,omitempty"`
}

// AnswerInfo is one answer to a handed-off run.
type AnswerInfo struct {
	Node string    `json:"node"`
	By   string    `json:"by,omitempty"`
	Time time.Time `json:"time"`
	Note string    `json:"note"`
}

// AttemptInfo is one node attempt in a run's timeline.
type AttemptInfo struct {
	Node       string  `json:"node"`
	Attempt    int     `json:"attempt"`
	Outcome    Outcome `json:"outcome,omitempty"`
	Error      string  `json:"error,omitempty"`
	Canceled   bool    `json:"canceled,omitempty"`
	TimedOut   bool    `json:"timed_out,omitempty"` // stopped at its node's timeout: the fail is the runtime's
	DurationMS int64   `json:"duration_ms"`
	Tokens     int     `json:"tokens,omitempty"`
	Cost       float64 `json:"cost,omitempty"`
	Edge       string  `json:"edge,omitempty"`
	To         string  `json:"to,omitempty"`
	Feedback   string  `json:"feedback,omitempty"`
	// Outputs are what the attempt published (outputs.<node>.*).
	Outputs map[string]any `json:"outputs,omitempty"`
}

// Summarize rebuilds a run's summary from its directory's journal.
func Summarize(dir string) (*Summary, error) {
	events, err := ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	var m meta
	_ = readJSON(filepath.Join(dir, "meta.json"), &m)
	s := &Summary{RunID: m.RunID, Blueprint: m.Blueprint, Dir: dir, Workspace: m.Workspace, Labels: m.Labels, Status: StatusRunning}
	index := map[string]int{}
	key := func(node string, n int) string { return fmt.Sprintf("%s#%d", node, n) }
	total, workspace := Elapsed(events)
	s.DurationMS, s.WorkspaceMS = total.Milliseconds(), workspace.Milliseconds()
	for _, ev := range events {
		switch ev.Type {
		case EvRunStarted:
			s.Started, s.Inputs, s.BlueprintName = ev.Time, ev.Inputs, ev.Blueprint
			if s.RunID == "" { // meta.json is gone: the journal knows
				s.RunID = ev.RunID
			}
		case EvRunResumed:
			s.Resumes++
		case EvAnswered:
			s.Answers = append(s.Answers, AnswerInfo{Node: ev.Node, By: ev.By, Time: ev.Time, Note: ev.Feedback})
			s.Status, s.Kind, s.Reason = StatusRunning, "", ""
		case EvEnvironment:
			s.Sandbox = ev.Layers
		case EvNodeStarted:
			s.NodeRuns++
			index[key(ev.Node, ev.Attempt)] = len(s.Attempts)
			s.Attempts = append(s.Attempts, AttemptInfo{Node: ev.Node, Attempt: ev.Attempt})
		case EvNodeFinished, EvNodeCanceled:
			i, ok := index[key(ev.Node, ev.Attempt)]
			if !ok {
				continue
			}
			a := &s.Attempts[i]
			if ev.Type == EvNodeCanceled {
				a.Canceled = true
				continue
			}
			a.Outcome, a.Error, a.DurationMS, a.Tokens, a.Feedback = ev.Outcome, ev.Error, ev.DurationMS, ev.Tokens, ev.Feedback
			a.Outputs, a.Cost, a.TimedOut = ev.Outputs, ev.Cost, ev.TimedOut
			s.Tokens += ev.Tokens
			s.Cost += ev.Cost
		case EvEdgeTaken:
			for i := len(s.Attempts) - 1; i >= 0; i-- {
				if s.Attempts[i].Node == ev.Node {
					s.Attempts[i].Edge, s.Attempts[i].To = ev.Edge, ev.To
					break
				}
			}
		case EvRunFinished:
			s.Status, s.Kind, s.Reason = ev.Status, ev.Kind, ev.Reason
		case EvRunClosed:
			// Spent by attempts canceled before they finished.
			s.FinishMS, s.Cost = ev.DurationMS, s.Cost+ev.Cost
		}
	}
	return s, nil
}

// Elapsed is a run's working time by its journal: from run_started to its
// latest event, less the time it waited handed off for each answer or
// dead for each resume, plus
// each workspace set-up (environment events carry their duration: the
// set-up happens before run_started, a resume or an answer). workspace is
// the set-ups' part of total.
func Elapsed(events []Event) (total, workspace time.Duration) {
	var started, last time.Time
	var idle time.Duration
	for _, ev := range events {
		if (ev.Type == EvAnswered || ev.Type == EvRunResumed) && !last.IsZero() && ev.Time.After(last) {
			idle += ev.Time.Sub(last) // waiting for a person, or for a resume after a crash
		}
		if ev.Time.After(last) {
			last = ev.Time // an event without a time must not end the run at year 1
		}
		switch ev.Type {
		case EvRunStarted:
			started = ev.Time
		case EvEnvironment:
			workspace += time.Duration(ev.DurationMS) * time.Millisecond
		}
	}
	if started.IsZero() {
		return 0, 0
	}
	return last.Sub(started) - idle + workspace, workspace
}

// LastFeedback returns the most recent non-empty feedback of the run.
func (s *Summary) LastFeedback() (string, string) {
	for i := len(s.Attempts) - 1; i >= 0; i-- {
		if a := s.Attempts[i]; a.Feedback != "" {
			return a.Node, a.Feedback
		}
	}
	return "", ""
}

// ListRuns summarizes every run directory under runsDir, newest first.
func ListRuns(runsDir string) ([]*Summary, error) {
	entries, err := os.ReadDir(runsDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Summary
	for i := len(entries) - 1; i >= 0; i-- {
		if !entries[i].IsDir() {
			continue
		}
		s, err := Summarize(filepath.Join(runsDir, entries[i].Name()))
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
