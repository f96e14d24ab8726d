package promote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/sandbox"
)

// recordFiles are the files of the run directory promotion reads besides
// the change: the verdicts, the commit, the push. Review nodes' state
// (review-NODE.json: the pull request they opened, the wait's start)
// goes along too. The harness wrote them all, outside any box.
var recordFiles = []string{"verify.json", "commit.json", "push.json"}

// TakeRecords reads the run's promotion records in runDir as one JSON
// object (file name to content), for a durable engine to carry to the host
// a run moves to; nil when there are none yet.
func TakeRecords(runDir string) ([]byte, error) {
	names := append([]string(nil), recordFiles...)
	reviews, err := filepath.Glob(filepath.Join(runDir, "review-*.json"))
	if err != nil {
		return nil, err
	}
	for _, r := range reviews {
		names = append(names, filepath.Base(r))
	}
	out := map[string]json.RawMessage{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(runDir, n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%s is not JSON", n)
		}
		out[n] = b
	}
	if len(out) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// PutRecords writes records (as TakeRecords read them on the lost host)
// into runDir. Only the names TakeRecords takes are written.
func PutRecords(runDir string, records []byte) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(records, &in); err != nil {
		return fmt.Errorf("the run's records: %w", err)
	}
	for n, b := range in {
		if !recordName(n) {
			return fmt.Errorf("the run's records name %q, which is not a promotion record", n)
		}
		if err := atomicfile.Write(filepath.Join(runDir, n), b); err != nil {
			return err
		}
	}
	return nil
}

// recordName reports whether n is a file TakeRecords takes.
func recordName(n string) bool {
	for _, f := range recordFiles {
		if n == f {
			return true
		}
	}
	mid, ok := strings.CutPrefix(n, "review-")
	mid, ok2 := strings.CutSuffix(mid, ".json")
	return ok && ok2 && mid != "" && !strings.ContainsAny(mid, `/\`) && mid != "." && mid != ".."
}

// Remake makes the recorded commit c again in p when p does not hold it (a
// run moved to this host has a new promotion repository): the same
// parent, tree, message, author and date give the same commit, which is
// checked. changes is the rebuilt change the verdicts vouch for.
func Remake(p *gitstore.Repo, c *Committed, changes []sandbox.Change) error {
	if t, err := p.Git(context.Background(), "cat-file", "-t", c.Commit); err == nil && strings.TrimSpace(t) == "commit" {
		return nil
	}
	short := c.Commit[:min(12, len(c.Commit))]
	if c.Message == "" || c.When.IsZero() {
		return fmt.Errorf("commit %s is not in this host's promotion repository, and its record (from an older sandgate) cannot make it again: commit again", short)
	}
	parent := plumbing.NewHash(c.Parent)
	if parent != p.Base() {
		// A later attempt's parent was the run's earlier commit, made on
		// the lost host; a push would need its objects too.
		if t, err := p.Git(context.Background(), "cat-file", "-t", c.Parent); err != nil || strings.TrimSpace(t) != "commit" {
			return fmt.Errorf("commit %s builds on the run's earlier commit %s, which is not on this host: commit again", short, c.Parent[:min(12, len(c.Parent))])
		}
	}
	got, err := p.CommitChange(parent, changes, c.Message, object.Signature{Name: c.Author, Email: c.Email, When: c.When})
	if err != nil {
		return err
	}
	if got.Hash.String() != c.Commit {
		return fmt.Errorf("made commit %s again on this host as %s: the record does not hold together, refused", short, got.Hash.String()[:12])
	}
	return p.SetBranch(c.Branch, c.Commit)
}
