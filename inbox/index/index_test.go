package index_test

import (
	"fmt"
	"os"
	"path/filepath"
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
