package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"text/tabwriter"

	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes"
)

const reviewHelp = `list | show ID | approve ID | reject ID [--note TEXT] [--by NAME]

Lists, shows, approves or rejects the changes runs left in the local review
queue. approve does what the blueprint's review node declares in
on_approve (merge_into a branch of the remote, or GitHub ready, approve,
merge); a review node without on_approve merges nothing on approval.

flags:`

func cmdReview(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("review", reviewHelp, stdout, stderr)
	dir := fs.String("reviews-dir", "", "local review queue directory (default: the current repository's, beside its runs; see run --help)")
	fs.alias("dir", "reviews-dir")
	note := fs.String("note", "", "note recorded with approve or reject")
	by := fs.String("by", "", "who decides, recorded with approve or reject (default: the login name)")
	format := fs.format("text", "json")
	var allow listFlag
	fs.Var(&allow, "allow-endpoint", "let approve send an entry's token to URLs under this prefix (repeatable; https://github.com and https://api.github.com need none)")
	pos, code, ok := fs.parseN(args, 1, 2)
	if !ok {
		return code
	}
	if *dir == "" {
		*dir = filepath.Join(filepath.Dir(defaultRunsDir(".")), "reviews")
	}
	*dir = absPath(*dir) // approve runs git elsewhere: a relative path would name nothing there
	q := &nodes.ReviewQueue{Dir: *dir, AllowEndpoints: allow}
	switch {
	case pos[0] == "list" && len(pos) == 1:
		return reviewList(q, stdout, stderr)
	case pos[0] == "show" && len(pos) == 2:
		return reviewShow(q, pos[1], *format, stdout, stderr)
	case (pos[0] == "approve" || pos[0] == "reject") && len(pos) == 2:
		return reviewDecide(q, pos[0], pos[1], *note, decider(*by), stdout, stderr)
	}
	return fs.usageError("")
}

// decider is who the decision is recorded as: --by, else the login name.
func decider(by string) string {
	if by != "" {
		return by
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

func reviewList(q *nodes.ReviewQueue, stdout, stderr io.Writer) int {
	entries, err := q.List()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tBRANCH\tTITLE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Line(e.ID), termtext.Line(e.Status), termtext.Line(e.Branch), termtext.Short(e.Title, maxReason))
	}
	tw.Flush()
	return exitOK
}

func reviewShow(q *nodes.ReviewQueue, id, format string, stdout, stderr io.Writer) int {
	d, err := q.Get(id)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return reviewExit(err)
	}
	if format == "json" {
		b, _ := json.MarshalIndent(d, "", "  ")
		fmt.Fprintf(stdout, "%s\n", termtext.JSON(b))
		return exitOK
	}
	writeReview(stdout, d)
	return exitOK
}

func reviewDecide(q *nodes.ReviewQueue, verb, id, note, by string, stdout, stderr io.Writer) int {
	decide := q.Approve
	if verb == "reject" {
		decide = q.Reject
	}
	e, err := decide(context.Background(), id, note, by)
	if e == nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return reviewExit(err)
	}
	if verb == "reject" && err == nil {
		for _, br := range e.DeleteOnReject {
			fmt.Fprintf(stdout, "deleted %s on the remote (delete_on_reject)\n", termtext.Line(br.Ref))
		}
	}
	fmt.Fprintf(stdout, "%s: %s (branch %s)\n", termtext.Line(id), termtext.Line(e.Status), termtext.Line(e.Branch))
	if line := landedLine(e); line != "" {
		fmt.Fprintln(stdout, termtext.Line(line))
	}
	if err != nil { // rejected, but a pushed branch could not be deleted
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	return exitOK
}

// reviewExit is exit 2 for an id that names no entry, 1 for a failure.
func reviewExit(err error) int {
	if errors.Is(err, nodes.ErrNoReview) || errors.Is(err, nodes.ErrBadReviewID) {
		return exitUsage
	}
	return exitFailed
}
