package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Handoff is what a person needs to pick up a run the harness gave up on;
// it is written as handoff.json and handoff.md in the run directory.
type Handoff struct {
	RunID        string        `json:"run_id"`
	Blueprint    string        `json:"blueprint"`
	Reason       string        `json:"reason"`
	Kind         string        `json:"kind"`
	Workspace    string        `json:"workspace"`
	Attempts     []AttemptInfo `json:"attempts"`
	LastFeedback string        `json:"last_feedback,omitempty"`
	FeedbackFrom string        `json:"feedback_from,omitempty"`
	Diff         string        `json:"diff,omitempty"`
	Files        []string      `json:"files"`
}

func (x *execution) writeHandoff(sum *Summary, diff string) error {
	h := Handoff{RunID: sum.RunID, Blueprint: sum.Blueprint, Reason: sum.Reason, Kind: sum.Kind,
		Workspace: sum.Workspace, Attempts: sum.Attempts}
	h.FeedbackFrom, h.LastFeedback = sum.LastFeedback()
	h.Diff = diff
	for _, f := range []string{"events.jsonl", "run.json", "trace.json", "nodes", "blueprint.yaml"} {
		if _, err := os.Stat(filepath.Join(x.dir, f)); err == nil {
			h.Files = append(h.Files, filepath.Join(x.dir, f))
		}
	}
	return writeFiles(x.redact, x.dir, map[string][]byte{"handoff.json": mustJSON(h), "handoff.md": []byte(h.Markdown())})
}

// Markdown renders the hand-off for a person.
func (h *Handoff) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Hand-off: run %s (%s)\n\n", h.RunID, h.Blueprint)
	fmt.Fprintf(&b, "**Why a person is needed:** %s\n\n", h.Reason)
	fmt.Fprintf(&b, "Workspace: `%s`\n\n## What was tried\n\n", h.Workspace)
	b.WriteString("| node | attempt | outcome | duration | edge taken |\n|---|---|---|---|---|\n")
	for _, a := range h.Attempts {
		out := string(a.Outcome)
		switch {
		case a.Canceled:
			out = "canceled"
		case a.Error != "":
			out = "error: " + oneLine(a.Error)
		case out == "":
			out = "did not finish"
		}
		edge := ""
		if a.To != "" {
			edge = a.Edge + " → " + a.To
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d ms | %s |\n", a.Node, a.Attempt, out, a.DurationMS, edge)
	}
	if h.LastFeedback != "" {
		fmt.Fprintf(&b, "\n## Last feedback (from %s)\n\n```\n%s\n```\n", h.FeedbackFrom, strings.TrimRight(h.LastFeedback, "\n"))
	}
	if h.Diff != "" {
		fmt.Fprintf(&b, "\n## Change so far\n\n```diff\n%s\n```\n", strings.TrimRight(h.Diff, "\n"))
	}
	b.WriteString("\n## Where to look\n\n")
	for _, f := range h.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	b.WriteString("\nThis run is over: the harness stopped instead of trying further. Take the change from the\n" +
		"workspace diff above or from the run's logs, or resolve the blocker and start a new run.\n")
	return b.String()
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
