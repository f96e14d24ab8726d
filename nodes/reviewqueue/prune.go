package reviewqueue

import (
	"os"
	"path/filepath"
	"sort"
	"time"
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

// Remove deletes an entry and its files.
func (q *Queue) Remove(id string) error {
	if err := validReviewID(id); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(q.Dir, id))
}
