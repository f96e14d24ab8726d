package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/termtext"
)

// maxPatchLines caps the excerpt of the change in handoff.md; the whole
// change is in change.patch.
const maxPatchLines = 200

// outcomeText says in plain words why a run was handed off. It is made
// from harness data only (the blueprint, the kind of end, counts): what an
// agent or a repository wrote is quoted elsewhere, never spliced in here,
// so it cannot pass for the harness's account.
func outcomeText(bp *blueprint.Blueprint, sum *Summary) string {
	switch sum.Kind {
	case "edge":
		if e := exhaustedEdge(bp, sum.Reason); e != nil {
			return edgeOutcome(bp, sum, e)
		}
	case "node":
		if a := lastHandoff(sum); a != nil {
			return capitalize(fmt.Sprintf("%s asked for a person in attempt %d; its reason is quoted under \"Reason given\" below.", nodeName(bp, a.Node), a.Attempt))
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
	case "workspace_lost":
		return "The host that held the run's workspace is gone; the reason is quoted under \"Reason given\" below."
	}
	return "The run was handed to a person; the reason is quoted under \"Reason given\" below."
}

// lastHandoff is the latest attempt that asked for a person.
func lastHandoff(sum *Summary) *AttemptInfo {
	for i := len(sum.Attempts) - 1; i >= 0; i-- {
		if a := &sum.Attempts[i]; a.Outcome == OutcomeHandoff {
			return a
		}
	}
	return nil
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
	id, _, _ := strings.Cut(rest, ": ")
	n := bp.Nodes[id]
	if n == nil || n.Type != blueprint.TypeHandoff {
		return "The run reached a hand-off step; the reason is quoted under \"Reason given\" below."
	}
	why, _ := n.Config["reason"].(string)
	s := fmt.Sprintf("The run reached its hand-off step `%s` (%s)", id, termtext.Line(orDefault(why, "no reason given")))
	for i := len(sum.Attempts) - 1; i >= 0; i-- {
		if a := sum.Attempts[i]; a.To == id {
			how := "ended " + verdictWord(a)
			if a.TimedOut {
				how = "timed out"
			}
			return s + fmt.Sprintf(" after %s %s.", nodeName(bp, a.Node), how)
		}
	}
	return s + "."
}

// verdictWord is an attempt's verdict in one harness word; a node's error
// text is the node's, quoted elsewhere.
func verdictWord(a AttemptInfo) string {
	if a.Error != "" && !a.Canceled {
		return "with an error"
	}
	return verdictOf(a)
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

// Markdown renders the hand-off for a person. The sections a person acts
// on come first and are the harness's own words: the outcome, how to take
// the change over, how to answer. Everything an agent, a repository or a
// command wrote follows as a quotation: inline code spans for short
// values, fenced blocks (a fence longer than any backtick run inside) for
// the rest, control characters written out visibly, so no such text can
// open a heading, a command block or a link, or steer a terminal that
// prints the file.
func (h *Handoff) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Hand-off: run %s (%s)\n\n", codeSpan(h.RunID), codeSpan(h.Blueprint))
	h.writeLead(&b)
	b.WriteString("\n## What was tried\n\n")
	for i, t := range h.Tried {
		writeTried(&b, i+1, t)
	}
	if h.LastFeedback != "" {
		fmt.Fprintf(&b, "\n## Last feedback (from %s)\n\n%s\n", codeSpan(h.FeedbackFrom), fenced("", h.LastFeedback))
	}
	if h.excerpt != "" {
		fmt.Fprintf(&b, "\n## The change (see %s for all of it)\n\n%s\n", PatchFile, fenced("diff", h.excerpt))
	}
	b.WriteString("\n## Where to look\n\n")
	for _, f := range h.Files {
		fmt.Fprintf(&b, "- %s\n", codeSpan(f))
	}
	return b.String()
}

// Lead is the part of handoff.md a person reads first: the outcome, how
// to take the change over and how to answer, then the task and the
// reason as quotations. `sandgate show` prints it.
func (h *Handoff) Lead() string {
	var b strings.Builder
	h.writeLead(&b)
	return b.String()
}

func (h *Handoff) writeLead(b *strings.Builder) {
	fmt.Fprintf(b, "## Outcome\n\n%s\n\nSpent: %d tokens, cost: $%.4f\n\n## Take over\n\n", h.Outcome, h.Tokens, h.Cost)
	h.writeTakeover(b)
	if h.Answer != "" {
		fmt.Fprintf(b, "\n## Answer\n\nIf a sentence would unblock the agent, answer the run: it continues on its own workspace with your note as the node's feedback (%d answer(s) left, budget.answers):\n\n%s\n",
			h.AnswersLeft, fenced("sh", h.Answer))
	}
	if len(h.Task) > 0 {
		b.WriteString("\n## Task\n\n")
		for _, k := range slices.Sorted(maps.Keys(h.Task)) {
			v := fmt.Sprint(h.Task[k])
			if strings.ContainsAny(v, "\n\r") {
				fmt.Fprintf(b, "- **%s**:\n\n%s\n", termtext.Line(k), indent(fenced("", v), "  "))
			} else {
				fmt.Fprintf(b, "- **%s**: %s\n", termtext.Line(k), codeSpan(v))
			}
		}
	}
	fmt.Fprintf(b, "\n## Reason given\n\nThe run's own account (%s), quoted: it may hold what an agent or a command wrote.\n\n%s\n", codeSpan(h.Kind), fenced("text", h.Reason))
}

func (h *Handoff) writeTakeover(b *strings.Builder) {
	c := h.Change
	switch {
	case c.Error != "":
		fmt.Fprintf(b, "The change could not be saved; the run's logs show what the agent did. Why:\n\n%s\n", fenced("text", c.Error))
	case c.Patch == "":
		b.WriteString("The run left no change to take over: resolve the blocker and start a new run.\n")
	default:
		base := ""
		if h.Base != "" {
			base = fmt.Sprintf(", made against commit %s", codeSpan(h.Base))
		}
		fmt.Fprintf(b, "The change is not in your repository (%s): it is saved as %s (%s)%s. To continue from it on a new branch:\n\n%s\n",
			codeSpan(h.Repository), codeSpan(c.Patch), changeSize(c), base, fenced("sh", strings.Join(h.Takeover, "\n")))
		if c.Redacted {
			b.WriteString("\nA credential was cut out of the patch, so it may not apply as is.\n")
		}
	}
	for _, p := range h.Pushed {
		fmt.Fprintf(b, "\nThe run also pushed branch %s to %s (node %s).\n", codeSpan(p.Branch), codeSpan(p.Remote), codeSpan(p.Node))
	}
	if len(h.Fetch) > 0 {
		fmt.Fprintf(b, "To continue from the pushed branch instead:\n\n%s\n", fenced("sh", strings.Join(h.Fetch, "\n")))
	}
}

func changeSize(c ChangeInfo) string {
	s := fmt.Sprintf("%d file(s)", len(c.Files))
	if len(c.Binary) > 0 {
		s += fmt.Sprintf(", %d binary", len(c.Binary))
	}
	names := c.Files
	if len(names) > 20 {
		names = names[:20]
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = codeSpan(n)
	}
	if len(c.Files) > len(names) {
		quoted = append(quoted, fmt.Sprintf("and %d more", len(c.Files)-len(names)))
	}
	return s + fmt.Sprintf(", %d bytes: %s", c.Bytes, strings.Join(quoted, ", "))
}

// writeTried lists one attempt: harness facts, with what the node said
// and the failing tests' names as code spans (one line each, cut).
func writeTried(b *strings.Builder, n int, t Tried) {
	verdict, detail, _ := strings.Cut(t.Verdict, ": ") // "broke: <the node's error>"
	fmt.Fprintf(b, "%d. `%s` (%s) attempt %d: **%s**", n, t.Node, t.Type, t.Attempt, termtext.Line(verdict))
	if detail != "" {
		fmt.Fprintf(b, " %s", codeSpan(clip(detail, maxSaid)))
	}
	if t.Tokens > 0 {
		fmt.Fprintf(b, ", %d tokens", t.Tokens)
	}
	if t.Counts != "" {
		fmt.Fprintf(b, " (%s)", termtext.Line(t.Counts))
	}
	if t.Next != "" {
		fmt.Fprintf(b, " → %s", t.Next)
	}
	b.WriteString("\n")
	if t.Summary != "" {
		fmt.Fprintf(b, "   - said: %s\n", codeSpan(clip(t.Summary, maxSaid)))
	}
	if len(t.Failures) > 0 {
		shown := t.Failures
		if len(shown) > 10 {
			shown = shown[:10]
		}
		spans := make([]string, len(shown))
		for i, f := range shown {
			spans[i] = codeSpan(clip(f, maxSaid))
		}
		fmt.Fprintf(b, "   - failing: %s", strings.Join(spans, ", "))
		if len(t.Failures) > len(shown) {
			fmt.Fprintf(b, " and %d more", len(t.Failures)-len(shown))
		}
		b.WriteString("\n")
	}
}

// maxSaid caps what handoff.md quotes inline of one summary or test
// name; the journal and the attempt's files have it whole.
const maxSaid = 300

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + " …"
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

// fenced quotes text as a fenced code block (termtext.Fence).
func fenced(lang, text string) string { return termtext.Fence(lang, text) }

// codeSpan quotes s inline (termtext.Code).
func codeSpan(s string) string { return termtext.Code(s) }

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}
