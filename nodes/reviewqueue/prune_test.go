package reviewqueue_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/nodes/reviewqueue"
)

// TestPrunable: only decided entries last touched before the cutoff go,
// never the keep newest, never a pending one however old; Remove deletes
// an entry and refuses what is not one.
func TestPrunable(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	q := &reviewqueue.Queue{Dir: t.TempDir()}
	for id, e := range map[string]reviewqueue.Entry{
		"new-decided":     {Status: reviewqueue.StatusApproved, Created: now.Add(-30 * day), Decided: now.Add(-time.Hour)},
		"old-decided":     {Status: reviewqueue.StatusRejected, Created: now.Add(-30 * day), Decided: now.Add(-20 * day)},
		"older-decided":   {Status: reviewqueue.StatusApproved, Created: now.Add(-40 * day), Decided: now.Add(-25 * day)},
		"ancient-pending": {Status: reviewqueue.StatusPending, Created: now.Add(-90 * day)},
	} {
		nodetest.WriteEntry(t, q.Dir, id, e)
	}
	// Newest first: new-decided, old-decided, older-decided,
	// ancient-pending; keep counts every entry, pending ones too.
	cases := []struct {
		keep int
		want []string
	}{
		{0, []string{"old-decided", "older-decided"}},
		{1, []string{"old-decided", "older-decided"}},
		{2, []string{"older-decided"}},
		{3, nil},
	}
	for _, c := range cases {
		got, err := q.Prunable(now.Add(-7*day), c.keep)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if !reflect.DeepEqual(ids, c.want) {
			t.Errorf("keep %d: prunable %v, want %v", c.keep, ids, c.want)
		}
	}
	if err := q.Remove("old-decided"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(q.Dir, "old-decided")); !os.IsNotExist(err) {
		t.Fatalf("the entry is still there: %v", err)
	}
	if err := q.Remove("../" + filepath.Base(q.Dir)); err == nil {
		t.Fatal("Remove took a path that is not an entry id")
	}
}
