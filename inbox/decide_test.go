package inbox_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/inbox"
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

// TestNavCountsAfterADecision: the nav's counts are shared for a poll
// interval (here an hour), but a decision's redirect shows the count after
// it, not the one from before.
func TestNavCountsAfterADecision(t *testing.T) {
	w := newWorldWith(t, func(o *inbox.Options) { o.Poll = time.Hour })
	w.acts.decided = func(queueDir, id string, _ bool) {
		path := filepath.Join(queueDir, id, "entry.json")
		b, err := os.ReadFile(path)
		must(t, err)
		writeFile(t, path, strings.Replace(string(b), `"status":"pending"`, `"status":"approved"`, 1))
	}
	c := client(nil)
	nav := regexp.MustCompile(`id="nav-reviews"[^>]*>(\d+)<`)
	count := func(path string) string {
		_, body := get(t, c, w.ts.URL+path)
		m := nav.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s has no review count", path)
		}
		return m[1]
	}
	if n := count("/reviews"); n != "1" {
		t.Fatalf("before: %s pending", n)
	}
	page := "/review/0/rev-1"
	if code, _ := postForm(t, w, c, page, page+"/decide", url.Values{"verdict": {"approve"}, "note": {"ok"}, "confirm": {"yes"}}); code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	if n := count("/reviews"); n != "0" {
		t.Fatalf("after the decision the nav still counts %s pending", n)
	}
}

func TestReviewQueueFilterAndRunLink(t *testing.T) {
	w := newWorld(t, "")
	writeReview(t, w.reviews+"/rev-2", w.runs+"/run-handoff")
	writeFile(t, w.reviews+"/rev-2/entry.json", `{"id":"rev-2","title":"Bump x/net","branch":"sandgate/bump","commit":"c","base":"b","run_dir":"`+w.runs+`/run-handoff","status":"approved","created":"2026-01-03T03:04:05Z"}`)
	c := w.ts.Client()
	for q, want := range map[string][]string{"": {"rev-2", "rev-1"}, "status=pending": {"rev-1"}, "q=bump": {"rev-2"}, "q=nothing": nil} {
		_, body := get(t, c, w.ts.URL+"/reviews?"+q)
		var got []string
		for _, id := range []string{"rev-2", "rev-1"} {
			if strings.Contains(body, `data-href="/review/0/`+id+`"`) {
				got = append(got, id)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("?%s: %v, want %v", q, got, want)
		}
	}
	if _, body := get(t, c, w.ts.URL+"/reviews?q=bump"); !strings.Contains(body, `<a href="/run/0/run-handoff">the run</a>`) {
		t.Error("the queue does not link an entry to its run")
	}
}
