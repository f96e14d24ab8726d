package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
)

// writeReview prints an entry for a person deciding on it: what the gates
// said, which files changed, why (the agent's summary, quoted), and the
// diff itself. Every piece of it came from a run, so it is printed through
// termtext: control characters written out, file names quoted as git
// quotes them.
func writeReview(w io.Writer, d *nodes.ReviewDetail) {
	e := d.Entry
	title := termtext.Line(e.Title)
	fmt.Fprintf(w, "%s\n%s\n\n", title, strings.Repeat("=", max(len([]rune(title)), 3)))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%s\n", termtext.Line(e.ID))
	fmt.Fprintf(tw, "status\t%s\n", termtext.Line(statusLine(&e)))
	fmt.Fprintf(tw, "branch\t%s at %s (base %s)\n", termtext.Line(e.Branch), termtext.Line(short(e.Commit)), termtext.Line(short(e.Base)))
	fmt.Fprintf(tw, "on approve\t%s\n", termtext.Line(approveLine(&e)))
	if e.RunDir != "" {
		fmt.Fprintf(tw, "evidence\tsandgate show %s\n", termtext.Line(e.RunDir))
	}
	tw.Flush()

	heading(w, "Verdict: "+overall(d.Verify))
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GATE\tVERDICT\tDETAILS")
	for _, g := range d.Gates {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termtext.Line(g.Gate), termtext.Line(g.Verdict), termtext.Line(cmp.Or(g.Details, "-")))
	}
	tw.Flush()

	added, deleted := 0, 0
	for _, f := range d.Files {
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	heading(w, fmt.Sprintf("Changed files: %d (+%d -%d)", len(d.Files), added, deleted))
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	for _, f := range d.Files {
		if f.Binary {
			fmt.Fprintf(tw, "\tbinary\t\t  %s\n", termtext.Name(f.Path))
			continue
		}
		fmt.Fprintf(tw, "\t+%d\t-%d\t  %s\n", f.Added, f.Deleted, termtext.Name(f.Path))
	}
	tw.Flush()

	// The agent's words come after the harness's verdict and file list,
	// each line quoted, so no line of them stands where a title does.
	heading(w, "Summary (the agent's words, quoted)")
	if e.AgentSummary == "" {
		fmt.Fprintln(w, "(no agent summary: the run had no agent node, or it did not finish)")
	} else {
		fmt.Fprintln(w, quoteLines(termtext.Text(strings.TrimRight(e.AgentSummary, "\n"))))
	}

	heading(w, "Diff")
	io.WriteString(termtext.Writer{W: w}, d.Diff)
	if d.Diff != "" && !strings.HasSuffix(d.Diff, "\n") {
		fmt.Fprintln(w)
	}
}

// quoteLines marks each line of s as quoted ("> ").
func quoteLines(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}

// heading starts a section: a blank line, the title, and a rule under it.
func heading(w io.Writer, title string) {
	fmt.Fprintf(w, "\n%s\n%s\n", title, strings.Repeat("-", len([]rune(title))))
}

func statusLine(e *nodes.ReviewEntry) string {
	s := e.Status
	if e.DecidedBy != "" {
		s += " by " + e.DecidedBy
	}
	if !e.Decided.IsZero() {
		s += " at " + e.Decided.Format(time.RFC3339)
	}
	if e.Note != "" {
		s += fmt.Sprintf(" (%q)", e.Note)
	}
	return s
}

// approveLine says what approving does, from the entry's on_approve.
func approveLine(e *nodes.ReviewEntry) string {
	a, pr := e.OnApprove, e.PullRequest
	switch {
	case a == nil:
		return "records the decision only (the review node declares no on_approve)"
	case a.GitHub != "" && pr == nil:
		return a.GitHub + " a pull request the entry does not record"
	case a.GitHub == "merge":
		return fmt.Sprintf("merge pull request %s#%d (%s)", pr.Repo, pr.Number, a.MergeMethod)
	case a.GitHub != "":
		return fmt.Sprintf("%s pull request %s#%d", a.GitHub, pr.Repo, pr.Number)
	case a.Method == "merge":
		return fmt.Sprintf("merge into %s on %s", a.MergeInto, redacted(a.Remote))
	}
	return fmt.Sprintf("fast-forward %s on %s", a.MergeInto, redacted(a.Remote))
}

// landedLine reports where an approval put the change.
func landedLine(e *nodes.ReviewEntry) string {
	a := e.OnApprove
	switch {
	case e.Status != nodes.StatusApproved:
		return ""
	case a == nil:
		// Approval only recorded the decision: say how to make it land.
		return "nothing merged: the blueprint's review node declares no on_approve; to merge approved changes, give it " +
			"on_approve: {merge_into: main} (a local queue; method: ff or merge) or on_approve: {github: merge} (a pull request)"
	}
	switch {
	case a.GitHub == "merge":
		return "merged the pull request as " + short(e.Landed)
	case a.GitHub != "":
		return a.GitHub + ": done on the pull request"
	}
	return fmt.Sprintf("%s on %s is now %s", a.MergeInto, redacted(a.Remote), short(e.Landed))
}

// overall is verify.json's "pass" as pass or fail, "none" without one.
func overall(verify json.RawMessage) string {
	var v struct {
		Pass *bool `json:"pass"`
	}
	if json.Unmarshal(verify, &v) != nil || v.Pass == nil {
		return "none recorded"
	}
	if *v.Pass {
		return "pass"
	}
	return "fail"
}

// redacted hides a password written into a remote URL.
func redacted(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
