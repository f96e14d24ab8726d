package reviewqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/verdict"
)

// Queue is the local review queue: one directory per queued change
// (entry.json, summary.md, verify.json, diff.patch), named by run id. The
// CLI and the web inbox both decide entries through it, so a decision is
// recorded the same way whoever makes it.
type Queue struct {
	Dir string
	// AllowEndpoints are the operator's URL prefixes a token may go to
	// (--allow-endpoint), beside GitHub's own: an entry's recorded
	// base_url or remote is checked again before its token is sent.
	AllowEndpoints []string
}

// Errors a caller can tell apart (errors.Is), e.g. to answer 400, 404 or
// 409.
var (
	ErrBadID   = errors.New("not a review entry id")
	ErrNoEntry = errors.New("no such review entry")
	ErrDecided = errors.New("review entry already decided")
)

// Detail is everything a reviewer reads about one entry.
type Detail struct {
	Entry Entry `json:"entry"`
	// Body is summary.md, the text a pull request would carry.
	Body   string          `json:"body"`
	Verify json.RawMessage `json:"verify,omitempty"`
	// Gates are the verdict's gates, one row each, sorted by node id.
	Gates []verdict.GateRow `json:"gates"`
	Diff  string            `json:"diff"`
	Files []ChangedFile     `json:"files"`
}

// List returns the queue's entries, newest first. A directory without a
// readable entry.json (one being written) is left out.
func (q *Queue) List() ([]Entry, error) {
	des, err := os.ReadDir(q.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("review queue %s: %w", q.Dir, err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || validReviewID(de.Name()) != nil {
			continue
		}
		if e, err := q.Lookup(de.Name()); err == nil {
			out = append(out, *e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// Get returns one entry with its summary, verdict, diff and changed files.
func (q *Queue) Get(id string) (*Detail, error) {
	e, err := q.Lookup(id)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(q.Dir, id)
	d := &Detail{Entry: *e}
	body, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	diff, _ := os.ReadFile(filepath.Join(dir, "diff.patch"))
	verify, _ := os.ReadFile(filepath.Join(dir, "verify.json"))
	d.Body, d.Diff = string(body), string(diff)
	if json.Valid(verify) {
		d.Verify = json.RawMessage(verify)
	}
	d.Gates = verdict.Rows(verify)
	d.Files = changedFiles(d.Diff)
	if d.Entry.AgentSummary == "" {
		d.Entry.AgentSummary = runSummary(e.RunDir)
	}
	return d, nil
}

// Approve does what the entry's on_approve says (lands the change on its
// target branch, or acts on its pull request) and records the approval.
// When the action fails the entry stays pending and the error says why.
func (q *Queue) Approve(ctx context.Context, id, note, by string) (*Entry, error) {
	return q.decide(id, StatusApproved, note, by, func(e *Entry) error {
		var err error
		switch {
		case e.OnApprove == nil:
			// Nothing declared: approving records the decision only.
		case e.PullRequest != nil || e.OnApprove.GitHub != "":
			e.Landed, err = q.approvePullRequest(ctx, e, note, by)
		default:
			e.Landed, err = q.land(ctx, e, note, by)
		}
		return err
	})
}

// Reject records the rejection and deletes the branches the run pushed
// with delete_on_reject. A branch that could not be deleted (someone moved
// it) is reported in the error, and the entry is rejected all the same.
//
// While a run waits for the decision (review wait:, the entry's Waiting),
// rejecting means "changes requested": the run takes the note back to the
// agent and pushes its next commit to the same branch, so the branches are
// kept. They are not deleted later either: a run that gives up after such
// a rejection leaves its branch for the operator to delete.
func (q *Queue) Reject(ctx context.Context, id, note, by string) (*Entry, error) {
	var cleanup []error
	e, err := q.decide(id, StatusRejected, note, by, func(e *Entry) error {
		if e.Waiting {
			return nil
		}
		for _, br := range e.DeleteOnReject {
			if err := q.deleteBranch(ctx, e, br); err != nil {
				cleanup = append(cleanup, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, errors.Join(cleanup...)
}

// decide runs act on a pending entry and records status, under the
// entry's lock: of two concurrent decisions one acts and the other finds
// the entry decided.
func (q *Queue) decide(id, status, note, by string, act func(*Entry) error) (*Entry, error) {
	if _, err := q.Lookup(id); err != nil {
		return nil, err
	}
	unlock, err := lockEntry(filepath.Join(q.Dir, id, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	e, err := q.Lookup(id) // again: another decision may have finished meanwhile
	if err != nil {
		return nil, err
	}
	if e.Status != StatusPending {
		return nil, fmt.Errorf("review %s: %w: it is %s%s", id, ErrDecided, e.Status, decidedBy(e))
	}
	if err := act(e); err != nil {
		return nil, fmt.Errorf("review %s stays pending: %w", id, err)
	}
	e.Status, e.Decided, e.DecidedBy, e.Note = status, time.Now().UTC(), by, note
	if err := atomicfile.WriteJSON(filepath.Join(q.Dir, id, "entry.json"), e); err != nil {
		return nil, fmt.Errorf("review %s: record %s: %w", id, status, err)
	}
	return e, nil
}

func decidedBy(e *Entry) string {
	s := ""
	if e.DecidedBy != "" {
		s += " by " + e.DecidedBy
	}
	if !e.Decided.IsZero() {
		s += " at " + e.Decided.Format(time.RFC3339)
	}
	return s
}

// Lookup reads an entry after checking id names a plain directory in the
// queue holding a regular entry.json: no path, no "..", no symlink out.
func (q *Queue) Lookup(id string) (*Entry, error) {
	if err := validReviewID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(q.Dir, id)
	for _, p := range []string{dir, filepath.Join(dir, "entry.json")} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("review %s in %s: %w", id, q.Dir, ErrNoEntry)
		}
		if err != nil {
			return nil, err
		}
		if want := p == dir; fi.IsDir() != want || fi.Mode()&fs.ModeSymlink != 0 || (!want && !fi.Mode().IsRegular()) {
			return nil, fmt.Errorf("review %s: %s is not a plain %s: %w", id, p, map[bool]string{true: "directory", false: "file"}[want], ErrBadID)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "entry.json"))
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("review %s: %s: %w", id, filepath.Join(dir, "entry.json"), err)
	}
	e.ID = id // the directory names the entry, whatever the file says
	return &e, nil
}

// validReviewID accepts a plain directory name: run ids are
// 20060102-150405-abcdef.
func validReviewID(id string) error {
	ok := id != "" && len(id) <= 128 && id[0] != '.'
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r))
	}
	if !ok {
		return fmt.Errorf("%q: %w (want a directory name in the queue, as review list shows)", id, ErrBadID)
	}
	return nil
}

// approvedBy is the line a merge records about the decision.
func approvedBy(by, note string) string {
	s := "Approved-by: " + by + " (sandgate review queue)"
	if note != "" {
		s = note + "\n\n" + s
	}
	return s
}
