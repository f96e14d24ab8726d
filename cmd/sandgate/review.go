package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/sandgate/sandgate/nodes"
)

func cmdReview(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("review", "list | show ID | approve ID | reject ID [--note TEXT]", stderr)
	dir := fs.String("dir", "", "local review queue directory (default: the current repository's, beside its runs; see run --help)")
	note := fs.String("note", "", "note recorded with approve or reject")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) == 0 {
		fs.Usage()
		return exitUsage
	}
	if *dir == "" {
		*dir = filepath.Join(filepath.Dir(defaultRunsDir(".")), "reviews")
	}
	switch {
	case pos[0] == "list" && len(pos) == 1:
		return reviewList(*dir, stdout, stderr)
	case pos[0] == "show" && len(pos) == 2:
		b, err := os.ReadFile(filepath.Join(*dir, pos[1], "summary.md"))
		if err != nil {
			fmt.Fprintln(stderr, "sandgate:", err)
			return exitUsage
		}
		d, _ := os.ReadFile(filepath.Join(*dir, pos[1], "diff.patch"))
		fmt.Fprintf(stdout, "%s\n```diff\n%s```\n", b, d)
		return exitOK
	case (pos[0] == "approve" || pos[0] == "reject") && len(pos) == 2:
		return reviewDecide(*dir, pos[1], map[string]string{"approve": "approved", "reject": "rejected"}[pos[0]], *note, stdout, stderr)
	}
	fs.Usage()
	return exitUsage
}

func readEntry(path string) (*nodes.ReviewEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e nodes.ReviewEntry
	return &e, json.Unmarshal(b, &e)
}

func reviewList(dir string, stdout, stderr io.Writer) int {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "entry.json"))
	var entries []*nodes.ReviewEntry
	for _, p := range paths {
		if e, err := readEntry(p); err == nil {
			entries = append(entries, e)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Created.After(entries[j].Created) })
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tBRANCH\tTITLE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, e.Status, e.Branch, e.Title)
	}
	tw.Flush()
	return exitOK
}

func reviewDecide(dir, id, status, note string, stdout, stderr io.Writer) int {
	path := filepath.Join(dir, id, "entry.json")
	e, err := readEntry(path)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	code := exitOK
	if status == "rejected" {
		// The blueprint asked for it (git_push delete_on_reject): the
		// rejected branch does not linger on the remote.
		for _, br := range e.DeleteOnReject {
			if err := nodes.DeleteBranch(context.Background(), br); err != nil {
				fmt.Fprintln(stderr, "sandgate:", err)
				code = exitFailed
				continue
			}
			fmt.Fprintf(stdout, "deleted %s on the remote\n", br.Ref)
		}
	}
	e.Status, e.Decided, e.Note = status, time.Now().UTC(), note
	b, _ := json.MarshalIndent(e, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "%s: %s (branch %s)\n", id, status, e.Branch)
	return code
}
