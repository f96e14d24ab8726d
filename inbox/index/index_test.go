package index_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sandgate/sandgate/inbox/find"
	"github.com/sandgate/sandgate/inbox/index"
)

// finishedRun writes a finished run's journal and meta.json by hand.
func finishedRun(t *testing.T, runs, id, task, labels string) {
	t.Helper()
	dir := filepath.Join(runs, id)
	must(t, os.MkdirAll(dir, 0o755))
	events := `{"seq":1,"type":"run_started","run_id":"` + id + `","blueprint":"calc","inputs":{"task":"` + task + `"},"time":"2026-01-02T10:00:00Z"}
{"seq":2,"type":"run_finished","status":"succeeded","time":"2026-01-02T10:00:05Z"}
`
	must(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(events), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"run_id":"`+id+`","workspace":"/src/calc","labels":`+labels+`}`), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSelectWordsAndLabels: the index finds runs by a word of their task
// and by label, exactly; a run added later is found after a refresh.
func TestSelectWordsAndLabels(t *testing.T) {
	runs := t.TempDir()
	finishedRun(t, runs, "r1", "Fix TestAdd in calc.go", `{"team":"infra"}`)
	finishedRun(t, runs, "r2", "Speed up the parser", `{"team":"infra-web"}`)
	ix := index.NewIndex(runs)
	ix.MinRefresh = -1
	ids := func(q string) string {
		var out []string
		for _, r := range index.Select(ix.Runs(), find.Query{Text: q, Sort: "run", Asc: true, PerPage: 50}).Runs {
			out = append(out, r.ID)
		}
		return fmt.Sprint(out)
	}
	for q, want := range map[string]string{"testadd": "[r1]", "label:team=infra": "[r1]", "label:team": "[r1 r2]", "label:team=inf": "[]", "parser label:team=infra-web": "[r2]"} {
		if got := ids(q); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
	if r := ix.Get(0, "r1"); r == nil || r.Task != "Fix TestAdd in calc.go" || r.Status != "succeeded" || r.Repository != "/src/calc" {
		t.Fatalf("r1 as indexed: %+v", r)
	}
	finishedRun(t, runs, "r3", "Fix TestAdd again", `{}`)
	if got := ids("testadd"); got != "[r1 r3]" {
		t.Errorf("after a new run: %s", got)
	}
}

// TestWatchedRefresh: after the first scan the index follows events: a
// run that ends, one that is removed and one that is made are all seen by
// the next refresh, the settled run's watch let go without losing its
// removal.
func TestWatchedRefresh(t *testing.T) {
	runs := t.TempDir()
	finishedRun(t, runs, "done", "old work", `{}`)
	open := filepath.Join(runs, "open")
	must(t, os.MkdirAll(open, 0o755))
	must(t, os.WriteFile(filepath.Join(open, "events.jsonl"), []byte(`{"seq":1,"type":"run_started","run_id":"open","inputs":{"task":"still going"},"time":"2026-01-02T11:00:00Z"}`+"\n"), 0o644))
	ix := index.NewIndex(runs)
	defer ix.Close()
	ix.MinRefresh = -1
	ix.Refresh() // the first refresh only scans; the second starts watching
	if r := ix.Runs(); len(r) != 2 || ix.Get(0, "open").Status != "interrupted" {
		t.Fatalf("first scan: %d runs, open is %+v", len(r), ix.Get(0, "open"))
	}
	if runtime.GOOS == "linux" && !index.Watching(ix) {
		t.Fatal("the index does not watch on Linux")
	}
	f, err := os.OpenFile(filepath.Join(open, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"seq":2,"type":"run_finished","status":"failed","reason":"gave up","time":"2026-01-02T11:00:09Z"}` + "\n")
	must(t, err)
	f.Close()
	must(t, os.RemoveAll(filepath.Join(runs, "done")))
	finishedRun(t, runs, "new", "new work", `{}`)
	ix.Runs()
	if r := ix.Get(0, "open"); r == nil || r.Status != "failed" || r.Reason != "gave up" {
		t.Errorf("the ended run: %+v", r)
	}
	if ix.Get(0, "done") != nil || ix.Get(0, "new") == nil || len(ix.Runs()) != 2 {
		t.Errorf("removed/new runs not followed: %d runs", len(ix.Runs()))
	}
}
