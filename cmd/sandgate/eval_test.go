package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalCompareCLI(t *testing.T) {
	dir := t.TempDir()
	write := func(name, status string) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(map[string]any{"summary": map[string]any{"tasks": 1, "resolved_rate": 0.5},
			"tasks": []map[string]any{{"id": "a", "status": status}}})
		os.WriteFile(p, b, 0o644)
		return p
	}
	a, b := write("a.json", "handed_off"), write("b.json", "resolved")
	var out, errb bytes.Buffer
	if code := run([]string{"eval", "compare", a, b, "--format", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var c struct{ Changes []struct{ ID, Kind string } }
	if err := json.Unmarshal(out.Bytes(), &c); err != nil || len(c.Changes) != 1 || c.Changes[0].Kind != "newly_resolved" {
		t.Fatalf("%v %s", err, out.String())
	}
	out.Reset()
	if code := run([]string{"eval", "compare", a, b}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "newly_resolved") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if code := run([]string{"eval", "compare", a}, &out, &errb); code != exitUsage {
		t.Errorf("one report: exit %d", code)
	}
	if code := run([]string{"eval", "tasks.yaml"}, &out, &errb); code != exitUsage {
		t.Errorf("no --blueprint/--out: exit %d", code)
	}
	errb.Reset()
	bad := filepath.Join(dir, "t.yaml")
	os.WriteFile(bad, []byte("tasks:\n  - id: x\n"), 0o644)
	if code := run([]string{"eval", bad, "--blueprint", "fix-failing-test", "--out", dir}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "t.yaml:2:5: tasks[0].hidden: missing") {
		t.Errorf("bad task file: exit %d: %s", code, errb.String())
	}
}
