package reviewqueue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/credential"
)

// Prunable lists the decided entries last touched (decided, else
// created) before cutoff, beyond the keep newest entries, newest first.
// A pending entry is a person's to-do and is never listed; nor is one
// being written (no readable entry.json yet). The caller removes them
// (Remove).
func (q *Queue) Prunable(cutoff time.Time, keep int) ([]Entry, error) {
	entries, err := q.List()
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Touched().After(entries[j].Touched()) })
	var out []Entry
	for i, e := range entries {
		if i < keep || !e.Touched().Before(cutoff) || e.Status == StatusPending {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Touched is when the entry was decided, or else created.
func (e Entry) Touched() time.Time {
	if e.Decided.IsZero() {
		return e.Created
	}
	return e.Decided
}

// Remove deletes an entry and its files. The tokens its ledger still
// holds (an approval whose revocation failed or whose process died) are
// revoked first, through q.AllowEndpoints; while one is not, the entry
// stays: after the removal nothing could revoke it.
func (q *Queue) Remove(id string) error {
	if err := validReviewID(id); err != nil {
		return err
	}
	dir := filepath.Join(q.Dir, id)
	if err := credential.Sweep(context.Background(), dir, q.AllowEndpoints); err != nil {
		return fmt.Errorf("review %s kept: its minted tokens are not all revoked: %w", id, err)
	}
	return os.RemoveAll(dir)
}
