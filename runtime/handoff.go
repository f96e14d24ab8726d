package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/shellquote"
	"github.com/sandgate/sandgate/secrets"
)

// Handoff is what a person needs to pick up a run the harness gave up on:
// what the task was, why the run stopped, what each attempt did, and the
// commands that put the change on a branch of their repository. It is
// written as handoff.json and handoff.md, next to change.patch, in the run
// directory.
type Handoff struct {
	RunID     string `json:"run_id"`
	Blueprint string `json:"blueprint"`
	// Task is the run's inputs, defaults filled in.
	Task map[string]any `json:"task,omitempty"`
	// Outcome says in plain words why the run stopped; Reason and Kind
	// are the scheduler's technical account.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Kind    string `json:"kind"`
	// Tokens and Cost (USD) are what the run spent.
	Tokens int     `json:"tokens"`
	Cost   float64 `json:"cost"`
	// Repository is where the run started from. It does not hold the
	// change: that is in Change.Patch (and in Pushed branches).
	Repository string `json:"repository"`
	// Base is the commit the change applies to; empty when the run's
	// environment recorded none.
	Base   string      `json:"base,omitempty"`
	Change ChangeInfo  `json:"change"`
	Pushed []PushedRef `json:"pushed,omitempty"`
	// Answer is the command that answers the run and continues it on its
	// workspace (see Runtime.Answer); empty when no answer is left.
	Answer      string `json:"answer,omitempty"`
	AnswersLeft int    `json:"answers_left"`
	// AnswerTo is the node Answer resumes at: the one an answer should
	// go to (the inbox preselects it), not merely the blueprint's first.
	AnswerTo string `json:"answer_to,omitempty"`
	// Takeover are shell commands that put the change on a new branch of
	// Repository; Fetch, when a branch was pushed, fetch that instead.
	Takeover []string `json:"takeover,omitempty"`
	Fetch    []string `json:"fetch,omitempty"`
	// Tried is each attempt in words; Attempts the raw timeline.
	Tried    []Tried       `json:"tried"`
	Attempts []AttemptInfo `json:"attempts"`
	// LastFeedback is the most recent feedback, with runs of similar
	// lines collapsed and its size capped (the journal has it whole).
	LastFeedback string   `json:"last_feedback,omitempty"`
	FeedbackFrom string   `json:"feedback_from,omitempty"`
	Files        []string `json:"files"`
	// excerpt is the start of the patch, for handoff.md.
	excerpt string
}

// ChangeInfo describes the run's change as the hand-off saved it.
type ChangeInfo struct {
	// Patch is the path of change.patch; empty when there is no change.
	Patch  string   `json:"patch,omitempty"`
	Files  []string `json:"files,omitempty"`
	Binary []string `json:"binary,omitempty"`
	Bytes  int      `json:"bytes"`
	// Redacted reports that a credential was cut out of the patch, which
	// then may not apply cleanly.
	Redacted bool `json:"redacted,omitempty"`
	// Error says why the change could not be read.
	Error string `json:"error,omitempty"`
}

// PushedRef is a branch a node pushed: any attempt that published both
// outputs "remote" and "ref" (git_push does).
type PushedRef struct {
	Node   string `json:"node"`
	Remote string `json:"remote"`
	Branch string `json:"branch"`
}

// Tried is one attempt in words.
type Tried struct {
	Node    string `json:"node"`
	Type    string `json:"type"`
	Attempt int    `json:"attempt"`
	Verdict string `json:"verdict"`
	// Summary is what the node said it did (an agent's outputs.summary).
	Summary string `json:"summary,omitempty"`
	Tokens  int    `json:"tokens,omitempty"`
	// Counts are the attempt's numeric and boolean outputs
	// ("failed=1 passed=3"); Failures a test gate's failing tests.
	Counts   string   `json:"counts,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Next     string   `json:"next,omitempty"`
}

// change is the run's change as the environment rendered it at the end.
type change struct {
	patch []byte
	err   error
	// known is false when the environment cannot render changes at all.
	known bool
}

// PatchFile is the hand-off's change, in the form `git apply` takes.
const PatchFile = "change.patch"

// maxFeedback caps the hand-off's feedback section.
const maxFeedback = 8 << 10

// captureChange asks the environment for the change, before it closes.
func (x *execution) captureChange() change {
	switch {
	case x.env == nil:
		return change{}
	case x.env.Patch != nil:
		p, err := x.env.Patch()
		return change{patch: p, err: err, known: true}
	case x.env.Diff != nil:
		d, err := x.env.Diff()
		return change{patch: []byte(d), err: err, known: true}
	}
	return change{}
}

func (x *execution) writeHandoff(sum *Summary, ch change) error {
	return writeHandoff(x.dir, x.bp, sum, ch, x.redact)
}

// writeHandoff writes change.patch, handoff.json and handoff.md for a run
// that ended handed off. A run handed off again (after a person answered)
// calls it again: every file is rewritten whole.
func writeHandoff(dir string, bp *blueprint.Blueprint, sum *Summary, ch change, redact *secrets.Redactor) error {
	h := buildHandoff(dir, bp, sum)
	files := map[string][]byte{}
	_ = os.Remove(filepath.Join(dir, PatchFile)) // a second hand-off must not show the first one's change
	switch {
	case ch.err != nil:
		h.Change.Error = ch.err.Error()
	case len(ch.patch) > 0:
		red := redact.Bytes(ch.patch)
		h.Change = describePatch(red)
		h.Change.Patch, h.Change.Redacted = filepath.Join(dir, PatchFile), !bytes.Equal(red, ch.patch)
		files[PatchFile] = red
		h.excerpt = patchExcerpt(red)
	case !ch.known:
		h.Change.Error = "the run's environment does not record changes"
	}
	h.Takeover, h.Fetch = takeoverCommands(&h)
	files["handoff.json"] = mustJSON(h)
	files["handoff.md"] = []byte(h.Markdown())
	return writeFiles(redact, dir, files)
}

// buildHandoff gathers everything but the change from the run's summary.
func buildHandoff(dir string, bp *blueprint.Blueprint, sum *Summary) Handoff {
	h := Handoff{RunID: sum.RunID, Blueprint: sum.Blueprint, Reason: sum.Reason, Kind: sum.Kind,
		Tokens: sum.Tokens, Cost: sum.Cost, Repository: sum.Workspace, Attempts: sum.Attempts, Task: withDefaults(bp, sum.Inputs)}
	if len(h.Task) == 0 {
		h.Task = nil
	}
	if b, err := os.ReadFile(filepath.Join(dir, "base")); err == nil {
		h.Base = strings.TrimSpace(string(b))
	}
	h.Outcome = outcomeText(bp, sum)
	h.AnswersLeft = max(0, bp.Budget.Answers-len(sum.Answers))
	if h.AnswersLeft > 0 {
		// The run's directory, not its id: the line works from any
		// directory, whatever runs directory the run was recorded in; the
		// run's model and allowances come from its own record.
		abs, _ := filepath.Abs(dir)
		h.AnswerTo = answerTarget(bp, sum)
		h.Answer = "sandgate answer " + shellquote.Quote(abs) + " --to " + shellquote.Quote(h.AnswerTo) + " --note '…'"
	}
	from, fb := sum.LastFeedback()
	h.FeedbackFrom, h.LastFeedback = from, collapseLines(fb, maxFeedback)
	for _, a := range sum.Attempts {
		h.Tried = append(h.Tried, triedOf(bp, a))
		if p, ok := pushedOf(a); ok && !slices.Contains(h.Pushed, p) {
			h.Pushed = append(h.Pushed, p)
		}
	}
	for _, f := range []string{"events.jsonl", "run.json", "trace.json", "nodes", "blueprint.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			h.Files = append(h.Files, filepath.Join(dir, f))
		}
	}
	return h
}

// triedOf describes one attempt.
func triedOf(bp *blueprint.Blueprint, a AttemptInfo) Tried {
	t := Tried{Node: a.Node, Attempt: a.Attempt, Verdict: verdictOf(a), Tokens: a.Tokens, Counts: counts(a.Outputs)}
	if n := bp.Nodes[a.Node]; n != nil {
		t.Type = n.Type
	}
	if s, ok := a.Outputs["summary"].(string); ok {
		t.Summary = strings.TrimSpace(s)
	}
	if list, ok := a.Outputs["failures"].([]any); ok {
		for _, f := range list {
			t.Failures = append(t.Failures, fmt.Sprint(f))
		}
	}
	if a.To != "" {
		t.Next = a.To
	}
	return t
}

func verdictOf(a AttemptInfo) string {
	switch {
	case a.Canceled:
		return "canceled"
	case a.Error != "":
		return "broke: " + oneLine(a.Error)
	case a.TimedOut:
		return "timed out" // the runtime's fail, not the node's
	case a.Outcome == "":
		return "did not finish"
	}
	return string(a.Outcome)
}

// counts renders an attempt's numeric and boolean outputs, sorted.
func counts(o map[string]any) string {
	var parts []string
	for k, v := range o {
		switch v.(type) {
		case float64, int, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// pushedOf reads a pushed branch from an attempt's outputs.
func pushedOf(a AttemptInfo) (PushedRef, bool) {
	remote, _ := a.Outputs["remote"].(string)
	ref, _ := a.Outputs["ref"].(string)
	if a.Outcome != OutcomePass || remote == "" || ref == "" {
		return PushedRef{}, false
	}
	return PushedRef{Node: a.Node, Remote: remote, Branch: strings.TrimPrefix(ref, "refs/heads/")}, true
}

// describePatch lists the files a git patch touches.
func describePatch(p []byte) ChangeInfo {
	c := ChangeInfo{Bytes: len(p)}
	var cur string
	for _, line := range strings.Split(string(p), "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			cur = diffName(rest)
			c.Files = append(c.Files, cur)
			continue
		}
		if cur != "" && (line == "GIT binary patch" || strings.HasPrefix(line, "Binary files ")) {
			c.Binary = append(c.Binary, cur)
		}
	}
	return c
}

// diffName is the file a "diff --git a/NAME b/NAME" header names. git
// quotes a name holding a control character, a quote or a backslash
// ("a/notes\033[1A.txt"), in C's syntax, which strconv.Unquote reads.
func diffName(rest string) string {
	if strings.HasPrefix(rest, `"`) {
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				if name, err := strconv.Unquote(rest[:i+1]); err == nil {
					return strings.TrimPrefix(name, "a/")
				}
				return rest
			}
		}
		return rest
	}
	a := strings.TrimPrefix(rest, "a/")
	if i := strings.Index(a, " b/"); i >= 0 {
		return a[:i]
	}
	return a
}

// takeoverCommands are the commands that put the change on a branch of
// the user's repository, and those that fetch a pushed branch.
func takeoverCommands(h *Handoff) (takeover, fetch []string) {
	repo := shellquote.Quote(h.Repository)
	branch := "sandgate/" + h.RunID
	if h.Change.Patch != "" {
		checkout := "git -C " + repo + " checkout -b " + shellquote.Quote(branch)
		if h.Base != "" {
			checkout += " " + h.Base
		}
		takeover = []string{checkout, "git -C " + repo + " apply --index " + shellquote.Quote(h.Change.Patch)}
	}
	for _, p := range h.Pushed {
		fetch = append(fetch, "git -C "+repo+" fetch "+shellquote.Quote(p.Remote)+" "+shellquote.Quote(p.Branch),
			"git -C "+repo+" checkout -b "+shellquote.Quote(p.Branch)+" FETCH_HEAD")
	}
	return takeover, fetch
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// answerTarget is the node an answer most likely goes to: the one the
// exhausted retry edge led back to, else the first agent, else the node
// that was running last.
func answerTarget(bp *blueprint.Blueprint, sum *Summary) string {
	if e := exhaustedEdge(bp, sum.Reason); e != nil {
		return e.To
	}
	for _, id := range bp.Order {
		if bp.Nodes[id].Type == "agent" {
			return id
		}
	}
	if n := len(sum.Attempts); n > 0 {
		return sum.Attempts[n-1].Node
	}
	return bp.Start
}
