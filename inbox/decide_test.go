package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestApproveConfirmsAndRejectNeedsANote: approving asks once more (and
// carries the note through); rejecting without a note is refused.
func TestApproveConfirmsAndRejectNeedsANote(t *testing.T) {
	w := newWorld(t, "")
	c := client(nil)
	page := "/review/0/rev-1"
	if code, body := postForm(t, w, c, page, page+"/decide", url.Values{"verdict": {"reject"}, "note": {" "}}); code != http.StatusBadRequest || !strings.Contains(body, "no note") {
		t.Errorf("reject without a note: %d", code)
	}
	code, body := postForm(t, w, c, page, page+"/decide", url.Values{"verdict": {"approve"}, "note": {"ship it"}})
	if code != 200 || !strings.Contains(body, `name="confirm" value="yes"`) || !strings.Contains(body, `name="note" value="ship it"`) {
		t.Fatalf("approve did not ask to confirm: %d\n%s", code, body)
	}
	if got := w.acts.list(); len(got) != 0 {
		t.Fatalf("decided before the confirmation: %v", got)
	}
	if code, _ := postForm(t, w, c, page, page+"/decide", url.Values{"verdict": {"approve"}, "note": {"ship it"}, "confirm": {"yes"}}); code != http.StatusSeeOther {
		t.Fatalf("confirmed approve: %d", code)
	}
	if got := w.acts.list(); len(got) != 1 || got[0] != `decide reviews rev-1 true "ship it" tester` {
		t.Fatalf("actions %v", got)
	}
}
