package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/internal/lines"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/runtime"
)

// Task statuses.
const (
	StatusResolved       = "resolved"        // promoted, and the declared tests behave
	StatusFalsePromotion = "false_promotion" // promoted, and grading fails it
	StatusHandedOff      = "handed_off"      // the run ended with a person
	StatusFailed         = "failed"          // the run failed, or ended without promoting
	StatusInvalid        = "invalid"         // the base does not behave as the task declares
	StatusCanceled       = "canceled"        // the evaluation was canceled during this task
	StatusNotRun         = "not_run"         // canceled before this task started
	StatusError          = "error"           // the harness could not run or grade it
)

// TaskResult is one task's line of the report.
type TaskResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// CaughtBy names, for a change that was not promoted, the node that
	// last refused it and the first line of what it said: the defence
	// that stopped a cheat.
	CaughtBy       string  `json:"caught_by,omitempty"`
	Promoted       bool    `json:"promoted"`
	Resolved       bool    `json:"resolved"`
	FalsePromotion bool    `json:"false_promotion"`
	Tokens         int     `json:"tokens"`
	Cost           float64 `json:"cost"`
	DurationMS     int64   `json:"duration_ms"`
	NodeRuns       int     `json:"node_runs"`
	RunDir         string  `json:"run_dir,omitempty"`
	RunStatus      string  `json:"run_status,omitempty"`
	// Base is the commit the run started from; Commit what it promoted.
	Base         string      `json:"base,omitempty"`
	Commit       string      `json:"commit,omitempty"`
	GradeCommand string      `json:"grade_command,omitempty"`
	Grade        []TestGrade `json:"grade,omitempty"`
}

// Summary aggregates a report. Rates are over the measured tasks: those
// that ran to an end (resolved, false_promotion, handed_off, failed);
// invalid, canceled, not-run and errored tasks are counted apart.
type Summary struct {
	Tasks              int     `json:"tasks"`
	Measured           int     `json:"measured"`
	Resolved           int     `json:"resolved"`
	Promoted           int     `json:"promoted"`
	HandedOff          int     `json:"handed_off"`
	FalsePromotions    int     `json:"false_promotions"`
	ResolvedRate       float64 `json:"resolved_rate"`
	HandoffRate        float64 `json:"handoff_rate"`
	FalsePromotionRate float64 `json:"false_promotion_rate"`
	Invalid            int     `json:"invalid"`
	Errors             int     `json:"errors"`
	Tokens             int     `json:"tokens"`
	Cost               float64 `json:"cost"`
	MedianDurationMS   int64   `json:"median_duration_ms"`
	Partial            bool    `json:"partial"`
}

// Report is report.json.
type Report struct {
	Blueprint string        `json:"blueprint"`
	TaskFile  string        `json:"task_file"`
	Summary   Summary       `json:"summary"`
	Tasks     []*TaskResult `json:"tasks"`
}

// fromSummary fills the run's part of a result.
func (r *TaskResult) fromSummary(s *runtime.Summary) {
	r.Tokens, r.DurationMS, r.NodeRuns, r.RunDir, r.RunStatus = s.Tokens, s.DurationMS, s.NodeRuns, s.Dir, string(s.Status)
	r.Cost = runCost(filepath.Join(s.Dir, "run.json"))
	r.Reason = s.Reason
	var c struct{ Commit string }
	b, err := os.ReadFile(filepath.Join(s.Dir, "commit.json"))
	if err == nil && json.Unmarshal(b, &c) == nil && c.Commit != "" {
		r.Commit = c.Commit
	}
	switch {
	case s.Status == runtime.StatusSucceeded && r.Commit != "":
		r.Promoted = true
	case s.Status == runtime.StatusSucceeded:
		r.Status, r.Reason = StatusFailed, "the run succeeded without committing a change"
	case s.Status == runtime.StatusHandedOff:
		r.Status = StatusHandedOff
	case s.Status == runtime.StatusCanceled:
		r.Status = StatusCanceled
	default:
		r.Status = StatusFailed
	}
	if node, fb := s.LastFeedback(); !r.Promoted && node != "" {
		r.CaughtBy = node + ": " + caughtWhy(s.Dir, node, fb)
	}
}

// caughtWhy is what stopped a change at node: the gate's own reason from
// the run's verify.json (a test gate's names the problem, where its
// feedback starts with counts), else the first line of its feedback.
func caughtWhy(dir, node, feedback string) string {
	var v struct {
		Gates map[string]struct {
			Pass   bool   `json:"pass"`
			Reason string `json:"reason"`
		} `json:"gates"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "verify.json")); err == nil && json.Unmarshal(b, &v) == nil {
		if g, ok := v.Gates[node]; ok && !g.Pass && g.Reason != "" {
			return lines.First(g.Reason)
		}
	}
	return lines.First(feedback)
}

// runCost reads run.json's "cost": a number, or an object whose "usd" or
// "total" is one. Absent, it is 0.
func runCost(path string) float64 {
	var m map[string]any
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return 0
	}
	switch c := m["cost"].(type) {
	case float64:
		return c
	case map[string]any:
		for _, k := range []string{"usd", "total", "total_usd"} {
			if f, ok := c[k].(float64); ok {
				return f
			}
		}
	}
	return 0
}

func newReport(bp, taskFile string, results []*TaskResult, partial bool) *Report {
	rep := &Report{Blueprint: bp, TaskFile: taskFile, Tasks: results}
	s := &rep.Summary
	s.Tasks, s.Partial = len(results), partial
	var durations []int64
	for _, r := range results {
		s.Tokens += r.Tokens
		s.Cost += r.Cost
		if r.Promoted {
			s.Promoted++
		}
		switch r.Status {
		case StatusInvalid:
			s.Invalid++
			continue
		case StatusError:
			s.Errors++
			continue
		case StatusCanceled, StatusNotRun:
			s.Partial = true
			continue
		case StatusResolved:
			s.Resolved++
		case StatusFalsePromotion:
			s.FalsePromotions++
		case StatusHandedOff:
			s.HandedOff++
		}
		s.Measured++
		durations = append(durations, r.DurationMS)
	}
	if s.Measured > 0 {
		n := float64(s.Measured)
		s.ResolvedRate, s.HandoffRate, s.FalsePromotionRate = float64(s.Resolved)/n, float64(s.HandedOff)/n, float64(s.FalsePromotions)/n
	}
	s.MedianDurationMS = median(durations)
	return rep
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Write saves report.json and report.md in dir.
func (rep *Report) Write(dir string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	rep.Markdown(&md)
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(md.String()), 0o644)
}

// ReadReport loads a report.json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rep, nil
}

// Markdown writes the report as tables.
func (rep *Report) Markdown(w io.Writer) {
	s := rep.Summary
	fmt.Fprintf(w, "# sandgate eval: %s\n\ntasks: %s\n", rep.Blueprint, rep.TaskFile)
	if s.Partial {
		fmt.Fprintln(w, "\n**Partial report: the evaluation was canceled before every task ended.**")
	}
	fmt.Fprintln(w, "\n## Summary\n\n| metric | value |\n|---|---|")
	fmt.Fprintf(w, "| tasks | %d |\n| measured | %d |\n| resolved | %d (%s) |\n| handed off | %d (%s) |\n| false promotions | %d (%s) |\n",
		s.Tasks, s.Measured, s.Resolved, pct(s.ResolvedRate), s.HandedOff, pct(s.HandoffRate), s.FalsePromotions, pct(s.FalsePromotionRate))
	fmt.Fprintf(w, "| promoted | %d |\n| invalid | %d |\n| errors | %d |\n| tokens | %d |\n| cost | %.4f |\n| median duration | %d ms |\n",
		s.Promoted, s.Invalid, s.Errors, s.Tokens, s.Cost, s.MedianDurationMS)
	fmt.Fprintln(w, "\nRates are over the measured tasks (those whose run ended); invalid, errored and canceled tasks are counted apart.")
	fmt.Fprintln(w, "\n## Tasks\n\n| task | status | promoted | tokens | cost | duration | node runs | reason | caught by |\n|---|---|---|---|---|---|---|---|---|")
	for _, t := range rep.Tasks {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.4f | %d ms | %d | %s | %s |\n", cell(t.ID), t.Status, yesNo(t.Promoted), t.Tokens, t.Cost, t.DurationMS, t.NodeRuns, cell(t.Reason), orDash(cell(t.CaughtBy)))
	}
	fmt.Fprintln(w, "\n## Grading\n\n| task | test | kind | base | change |\n|---|---|---|---|---|")
	for _, t := range rep.Tasks {
		for _, g := range t.Grade {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", cell(t.ID), cell(g.Name), g.Kind, g.Before, orDash(g.After))
		}
	}
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell keeps a value from breaking a Markdown table row.
// cell is text for a table cell: box text (a reason, a gate's feedback)
// is data, so what would reach a terminal is written out first.
func cell(s string) string {
	s = strings.ReplaceAll(termtext.Line(s), "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func joinWhy(why []string) string { return strings.Join(why, "; ") }
