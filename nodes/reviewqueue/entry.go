package reviewqueue

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// Review queue entry states.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
)

// PushedBranch is a branch a git_push node made on a remote, which
// rejecting the entry deletes (see Entry.DeleteOnReject).
type PushedBranch = gitremote.PushedBranch

// Entry is one change waiting in the local review queue.
type Entry struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Branch  string    `json:"branch"`
	Commit  string    `json:"commit"`
	Base    string    `json:"base"`
	RunDir  string    `json:"run_dir"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	Decided time.Time `json:"decided,omitempty"`
	// DecidedBy is who approved or rejected the change.
	DecidedBy string `json:"decided_by,omitempty"`
	Note      string `json:"note,omitempty"`
	// Ignored and IgnoredCount are files the box wrote that .gitignore
	// kept out of the commit (at most 100 named).
	Ignored      []string `json:"ignored,omitempty"`
	IgnoredCount int      `json:"ignored_count,omitempty"`
	// AgentSummary is the agent's own account of its change (the agent
	// node's outputs.summary).
	AgentSummary string `json:"agent_summary,omitempty"`
	// OnApprove is what approving does; nil only records the decision.
	OnApprove *ApproveAction `json:"on_approve,omitempty"`
	// PullRequest is the pull request a github review opened.
	PullRequest *PullRequest `json:"pull_request,omitempty"`
	// Landed is the commit the target branch points at after approval:
	// the reviewed commit (ff), a merge commit, or GitHub's merge commit.
	Landed string `json:"landed,omitempty"`
	// DeleteOnReject are branches a git_push node with delete_on_reject
	// pushed; rejecting the entry deletes them on their remotes, unless
	// the run waits for the decision (Waiting).
	DeleteOnReject []PushedBranch `json:"delete_on_reject,omitempty"`
	// Updated is when a later commit of the same run replaced the one
	// under review (the run was sent back and pushed again).
	Updated time.Time `json:"updated,omitempty"`
	// History are the commits this entry reviewed before Commit, oldest
	// first, each with its title (what that attempt fixed) and decision.
	History []Attempt `json:"history,omitempty"`
	// Waiting says the run waits for this decision (review wait:): a
	// rejection then means "changes requested", the run continues on the
	// same branch, and rejecting keeps the pushed branches.
	Waiting   bool      `json:"waiting,omitempty"`
	WaitSince time.Time `json:"wait_since,omitzero"`
	WaitUntil time.Time `json:"wait_until,omitzero"`
}

// Attempt is an earlier commit of the run that the entry reviewed.
type Attempt struct {
	Commit    string    `json:"commit"`
	Title     string    `json:"title"`
	Status    string    `json:"status"`
	Note      string    `json:"note,omitempty"`
	DecidedBy string    `json:"decided_by,omitempty"`
	Decided   time.Time `json:"decided,omitzero"`
}

// Upsert queues fresh in dir, or updates the run's entry already
// there, under the entry's lock so no decision interleaves. The same
// commit again (a resumed or repeated attempt) keeps the entry as it is,
// decision included, and only refreshes the wait; a new commit moves the
// old one to History and puts the entry back to pending with the new
// files. It returns the entry as recorded and its absolute directory.
func Upsert(dir string, fresh Entry, files map[string][]byte, redact func([]byte) []byte) (*Entry, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	unlock, err := lockEntry(filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	old, err := readEntryFile(filepath.Join(dir, "entry.json"))
	if err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	if old != nil && old.Commit == fresh.Commit {
		old.Waiting, old.WaitSince, old.WaitUntil = fresh.Waiting && old.Status == StatusPending, fresh.WaitSince, fresh.WaitUntil
		if fresh.PullRequest != nil {
			old.PullRequest = fresh.PullRequest
		}
		return old, abs, atomicfile.WriteJSON(filepath.Join(dir, "entry.json"), old)
	}
	if old != nil {
		fresh.History = append(old.History, Attempt{Commit: old.Commit, Title: old.Title, Status: old.Status,
			Note: old.Note, DecidedBy: old.DecidedBy, Decided: old.Decided})
		fresh.Created, fresh.Updated = old.Created, time.Now().UTC()
	}
	files["entry.json"] = atomicfile.JSON(fresh)
	_, err = writeEntry(dir, files, redact)
	return &fresh, abs, err
}

// readEntryFile reads an entry.json; nil when there is none yet.
func readEntryFile(path string) (*Entry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &e, nil
}

// SetWaiting records whether a run still waits for the entry's decision.
func SetWaiting(dir string, waiting bool) error {
	unlock, err := lockEntry(filepath.Join(dir, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	e, err := readEntryFile(filepath.Join(dir, "entry.json"))
	if err != nil || e == nil || e.Waiting == waiting {
		return err
	}
	e.Waiting = waiting
	return atomicfile.WriteJSON(filepath.Join(dir, "entry.json"), e)
}
