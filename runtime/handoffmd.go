package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sandgate/sandgate/blueprint"
)

// maxPatchLines caps the excerpt of the change in handoff.md; the whole
// change is in change.patch.
const maxPatchLines = 200

// outcomeText says in plain words why a run was handed off.
func outcomeText(bp *blueprint.Blueprint, sum *Summary) string {
	switch sum.Kind {
	case "edge":
		if e := exhaustedEdge(bp, sum.Reason); e != nil {
			return edgeOutcome(bp, sum, e)
		}
	case "node":
		if i := strings.Index(sum.Reason, " asked for a person: "); i >= 0 {
			node := strings.TrimPrefix(sum.Reason[:i], "node ")
			return capitalize(fmt.Sprintf("%s asked for a person: %s", nodeName(bp, node), sum.Reason[i+len(" asked for a person: "):]))
		}
	case blueprint.TypeHandoff:
		return handoffNodeOutcome(bp, sum)
	case "tokens":
		return fmt.Sprintf("The run used up its token budget after spending %d tokens.", sum.Tokens)
	case "cost":
		return fmt.Sprintf("The run used up its cost budget after spending $%.4f.", sum.Cost)
	case "node_runs":
		return fmt.Sprintf("The run used up its budget of node runs after %d runs.", sum.NodeRuns)
	case "timeout":
		return "The run reached its time limit before any gate let the change through."
	}
	return "The run was handed to a person: " + sum.Reason
}

// exhaustedEdge finds the bounded edge a reason names.
func exhaustedEdge(bp *blueprint.Blueprint, reason string) *blueprint.Edge {
	for _, id := range bp.Order {
		for _, e := range bp.Nodes[id].Edges {
			if e.Bounded() && strings.Contains(reason, "retry edge "+e.String()+" exhausted") {
				return e
			}
		}
	}
	return nil
}

func edgeOutcome(bp *blueprint.Blueprint, sum *Summary, e *blueprint.Edge) string {
	tries := 0
	for _, a := range sum.Attempts {
		if a.Node == e.To && !a.Canceled {
			tries++
		}
	}
	verdict := "did not pass"
	if last := lastAttempt(sum, e.From); last != nil && last.Outcome == OutcomeFail {
		verdict = "failed"
	}
	return capitalize(fmt.Sprintf("%s still %s after %d attempt(s) of %s; the retry limit (max %d) on the edge %s → %s is used up.",
		nodeName(bp, e.From), verdict, tries, nodeName(bp, e.To), e.Max, e.From, e.To))
}

func handoffNodeOutcome(bp *blueprint.Blueprint, sum *Summary) string {
	rest, _ := strings.CutPrefix(sum.Reason, "reached ")
	id, why, _ := strings.Cut(rest, ": ")
	s := fmt.Sprintf("The run reached its hand-off step `%s` (%s)", id, why)
	for i := len(sum.Attempts) - 1; i >= 0; i-- {
		if a := sum.Attempts[i]; a.To == id {
			return s + fmt.Sprintf(" after %s ended %s.", nodeName(bp, a.Node), verdictOf(a))
		}
	}
	return s + "."
}

func lastAttempt(sum *Summary, node string) *AttemptInfo {
	for i := len(sum.Attempts) - 1; i >= 0; i-- {
		if a := &sum.Attempts[i]; a.Node == node && !a.Canceled {
			return a
		}
	}
	return nil
}

// nodeName names a node the way a person thinks of it.
func nodeName(bp *blueprint.Blueprint, id string) string {
	n := bp.Nodes[id]
	switch {
	case n == nil:
		return "`" + id + "`"
	case n.Gate:
		return "the `" + id + "` gate"
	case n.Type == "agent":
		return "the agent `" + id + "`"
	}
	return "step `" + id + "` (" + n.Type + ")"
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Markdown renders the hand-off for a person: the task, the outcome and
// how to take over first, then the attempts, the feedback and the change.
func (h *Handoff) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Hand-off: run %s (%s)\n\n", h.RunID, h.Blueprint)
	h.writeLead(&b)
	b.WriteString("\n## What was tried\n\n")
	for i, t := range h.Tried {
		writeTried(&b, i+1, t)
	}
	if h.LastFeedback != "" {
		fmt.Fprintf(&b, "\n## Last feedback (from %s)\n\n%s\n", h.FeedbackFrom, fenced("", h.LastFeedback))
	}
	if h.excerpt != "" {
		fmt.Fprintf(&b, "\n## The change (see %s for all of it)\n\n%s\n", PatchFile, fenced("diff", h.excerpt))
	}
	b.WriteString("\n## Where to look\n\n")
	for _, f := range h.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	return b.String()
}

// Lead is the part of handoff.md a person reads first: task, outcome and
// how to take the change over. `sandgate show` prints it.
func (h *Handoff) Lead() string {
	var b strings.Builder
	h.writeLead(&b)
	return b.String()
}

func (h *Handoff) writeLead(b *strings.Builder) {
	if len(h.Task) > 0 {
		b.WriteString("## Task\n\n")
		for _, k := range slices.Sorted(maps.Keys(h.Task)) {
			v := fmt.Sprint(h.Task[k])
			if strings.Contains(v, "\n") {
				fmt.Fprintf(b, "- **%s**:\n\n%s\n", k, indent(fenced("", v), "  "))
			} else {
				fmt.Fprintf(b, "- **%s**: %s\n", k, v)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "## Outcome\n\n%s\n\nTechnical reason (%s): %s\n\nSpent: %d tokens, cost: $%.4f\n\n## Take over\n\n", h.Outcome, h.Kind, h.Reason, h.Tokens, h.Cost)
	h.writeTakeover(b)
}

func (h *Handoff) writeTakeover(b *strings.Builder) {
	c := h.Change
	switch {
	case c.Error != "":
		fmt.Fprintf(b, "The change could not be saved (%s); the run's logs show what the agent did.\n", c.Error)
	case c.Patch == "":
		b.WriteString("The run left no change to take over: resolve the blocker and start a new run.\n")
	default:
		base := ""
		if h.Base != "" {
			base = fmt.Sprintf(", made against commit `%s`", h.Base)
		}
		fmt.Fprintf(b, "The change is not in your repository (`%s`): it is saved as `%s` (%s)%s. To continue from it on a new branch:\n\n%s\n",
			h.Repository, c.Patch, changeSize(c), base, fenced("sh", strings.Join(h.Takeover, "\n")))
		if c.Redacted {
			b.WriteString("\nA credential was cut out of the patch, so it may not apply as is.\n")
		}
	}
	for _, p := range h.Pushed {
		fmt.Fprintf(b, "\nThe run also pushed branch `%s` to `%s` (node %s).\n", p.Branch, p.Remote, p.Node)
	}
	if len(h.Fetch) > 0 {
		fmt.Fprintf(b, "To continue from the pushed branch instead:\n\n%s\n", fenced("sh", strings.Join(h.Fetch, "\n")))
	}
	if h.Answer != "" {
		fmt.Fprintf(b, "\n## Answer\n\nIf a sentence would unblock the agent, answer the run: it continues on its own workspace with your note as the node's feedback (%d answer(s) left, budget.answers):\n\n%s\n",
			h.AnswersLeft, fenced("sh", h.Answer))
	}
}

func changeSize(c ChangeInfo) string {
	s := fmt.Sprintf("%d file(s)", len(c.Files))
	if len(c.Binary) > 0 {
		s += fmt.Sprintf(", %d binary", len(c.Binary))
	}
	names := c.Files
	if len(names) > 20 {
		names = append(names[:20:20], fmt.Sprintf("and %d more", len(c.Files)-20))
	}
	return s + fmt.Sprintf(", %d bytes: %s", c.Bytes, strings.Join(names, ", "))
}

func writeTried(b *strings.Builder, n int, t Tried) {
	fmt.Fprintf(b, "%d. `%s` (%s) attempt %d: **%s**", n, t.Node, t.Type, t.Attempt, t.Verdict)
	if t.Tokens > 0 {
		fmt.Fprintf(b, ", %d tokens", t.Tokens)
	}
	if t.Counts != "" {
		fmt.Fprintf(b, " (%s)", t.Counts)
	}
	if t.Next != "" {
		fmt.Fprintf(b, " → %s", t.Next)
	}
	b.WriteString("\n")
	if t.Summary != "" {
		fmt.Fprintf(b, "   - said: %s\n", oneLine(t.Summary))
	}
	if len(t.Failures) > 0 {
		shown := t.Failures
		if len(shown) > 10 {
			shown = shown[:10]
		}
		fmt.Fprintf(b, "   - failing: %s", strings.Join(shown, ", "))
		if len(t.Failures) > len(shown) {
			fmt.Fprintf(b, " and %d more", len(t.Failures)-len(shown))
		}
		b.WriteString("\n")
	}
}

// patchExcerpt is the start of a patch with binary data left out.
func patchExcerpt(p []byte) string {
	var out []string
	binary := false
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		switch {
		case line == "GIT binary patch":
			binary = true
			out = append(out, "(binary data: see "+PatchFile+")")
			continue
		case strings.HasPrefix(line, "diff --git "):
			binary = false
		case binary:
			continue
		}
		if len(out) == maxPatchLines {
			return strings.Join(out, "\n") + "\n… (the rest is in " + PatchFile + ")"
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// fenced wraps text in a code fence longer than any backtick run in it.
func fenced(lang, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}
