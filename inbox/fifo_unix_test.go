//go:build unix

package inbox_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/inbox"
)

// TestActionsJournalIsNotAFIFO: a run directory may hold an
// actions.jsonl that is a FIFO; journaling must fail, not hang.
func TestActionsJournalIsNotAFIFO(t *testing.T) {
	w := newWorldWith(t, withLauncher)
	must(t, syscall.Mkfifo(filepath.Join(w.runs, "run-ok", inbox.ActionsFile), 0o644))
	code, _ := postForm(t, w, client(nil), "/run/0/run-ok/confirm/rerun", "/run/0/run-ok/act/rerun", url.Values{})
	if code != http.StatusInternalServerError {
		t.Fatalf("journaling into a FIFO: %d", code)
	}
}
