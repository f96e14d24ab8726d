package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// subcommands lists every command line that has its own help: each
// command, eval's two subcommands and sandbox image propose.
func subcommands() [][]string {
	var out [][]string
	for _, c := range commands() {
		out = append(out, []string{c.name})
	}
	return append(out, []string{"eval", "compare"}, []string{"eval", "import-swebench"}, []string{"sandbox", "image", "propose"})
}

// TestEveryCommandHelp: every subcommand answers --help and -h with its
// usage and a description, once, on stdout, and exits 0 (they exited 2,
// and some printed the usage twice).
func TestEveryCommandHelp(t *testing.T) {
	for _, cmd := range subcommands() {
		for _, h := range []string{"--help", "-h"} {
			name := strings.Join(cmd, " ")
			code, out, errs := runCLI(append(slices.Clone(cmd), h)...)
			want := "usage: sandgate " + name + " "
			if code != exitOK || !strings.HasPrefix(out, want) || strings.Count(out, "usage: sandgate ") != 1 || errs != "" {
				t.Errorf("%s %s: exit %d, want 0 and one usage starting %q on stdout\nstdout:\n%s\nstderr:\n%s", name, h, code, want, out, errs)
			}
			// More than a usage line: what the command does.
			if len(strings.Split(strings.TrimSpace(out), "\n")) < 3 {
				t.Errorf("%s %s: no description:\n%s", name, h, out)
			}
		}
	}
	for _, h := range []string{"--help", "-h", "help"} {
		if code, out, _ := runCLI(h); code != exitOK || !strings.Contains(out, "commands:") {
			t.Errorf("sandgate %s: exit %d\n%s", h, code, out)
		}
	}
}

// TestOneVocabulary: one name for one thing across every subcommand:
// --runs-dir wherever runs are read, --reviews-dir wherever review queues
// are, --format where output can be JSON. The old spellings (--runs,
// --reviews, --dir, --json) are never shown.
func TestOneVocabulary(t *testing.T) {
	must := map[string][]string{
		"run": {"runs-dir", "format"}, "resume": {"runs-dir", "format"}, "answer": {"runs-dir", "format"},
		"show": {"runs-dir", "format"}, "runs": {"runs-dir", "format"}, "cancel": {"runs-dir"},
		"stats": {"runs-dir", "format"}, "serve": {"runs-dir", "reviews-dir"}, "prune": {"runs-dir", "reviews-dir"},
		"review": {"reviews-dir", "format"}, "validate": {"format"}, "graph": {"format"}, "sandbox": {"format"},
		"eval": {"format"}, "eval compare": {"format"},
	}
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`)
	for _, cmd := range subcommands() {
		name := strings.Join(cmd, " ")
		if name == "worker" {
			continue // sandgate-temporal's own flags
		}
		_, out, _ := runCLI(append(slices.Clone(cmd), "--help")...)
		var shown []string
		for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
			shown = append(shown, m[1])
		}
		for _, old := range []string{"runs", "reviews", "dir", "json"} {
			if slices.Contains(shown, old) {
				t.Errorf("%s shows --%s; the vocabulary is --runs-dir, --reviews-dir, --format", name, old)
			}
		}
		for _, f := range must[name] {
			if !slices.Contains(shown, f) {
				t.Errorf("%s does not take --%s (shows %v)", name, f, shown)
			}
		}
	}
}

// TestOldSpellings: the old flag names still work, hidden.
func TestOldSpellings(t *testing.T) {
	runs, reviews := t.TempDir(), t.TempDir()
	writeRun(t, runs, "r1", time.Now().Add(-time.Hour), runtime.StatusSucceeded, "succeed", "reached done", 0)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--runs", runs, "--json"}, `"runs": 1`},
		{[]string{"runs", "--runs-dir", runs, "--json"}, `"run_id": "r1"`},
		{[]string{"show", "r1", "--runs-dir", runs, "--json"}, `"run_id": "r1"`},
		{[]string{"review", "list", "--dir", reviews}, "ID"},
		{[]string{"stats", "--runs-dir", runs, "--format", "table"}, "RUNS"},
	} {
		code, out, errs := runCLI(c.args...)
		if code != exitOK || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want %q\n%s%s", c.args, code, c.want, out, errs)
		}
	}
	// serve parses --runs and --reviews before it refuses the address.
	code, _, errs := runCLI("serve", "--runs", runs, "--reviews", reviews, "--addr", "0.0.0.0:0")
	if code != exitUsage || strings.Contains(errs, "not defined") || !strings.Contains(errs, "token") {
		t.Errorf("serve with the old spellings: exit %d %s", code, errs)
	}
}

// TestBuiltinNamesEverywhere: validate and graph take a built-in
// blueprint's name where they take a file, as run and eval do.
func TestBuiltinNamesEverywhere(t *testing.T) {
	dir := t.TempDir()
	inDir(t, dir, func() {
		if code, out, errs := runCLI("validate", "fix-failing-test", "lint-fix"); code != exitOK || strings.Count(out, "ok: ") != 2 {
			t.Errorf("validate by name: exit %d\n%s%s", code, out, errs)
		}
		if code, out, errs := runCLI("graph", "fix-failing-test"); code != exitOK || !strings.Contains(out, "flowchart") {
			t.Errorf("graph by name: exit %d\n%s%s", code, out, errs)
		}
		if code, _, errs := runCLI("graph", "no-such-blueprint"); code != exitUsage || !strings.Contains(errs, "built in: ") {
			t.Errorf("graph of an unknown name: exit %d %s", code, errs)
		}
		// A file of that name wins over the built-in.
		os.WriteFile(filepath.Join(dir, "lint-fix"), []byte("version: 1\n"), 0o644)
		if code, _, _ := runCLI("validate", "lint-fix"); code != exitUsage {
			t.Errorf("a file named like a built-in was not the one validated: exit %d", code)
		}
	})
}

// TestRunsAndStatsAgree: the blueprint sandgate runs shows for a run is
// the one stats --blueprint filters on (runs showed the file's name,
// stats matched the blueprint's name:, so filtering on what one sees
// counted nothing).
func TestRunsAndStatsAgree(t *testing.T) {
	runs := statsRuns(t)
	_, list, _ := runCLI("runs", "--runs-dir", runs)
	rows := strings.Split(strings.TrimSpace(list), "\n")[1:]
	if len(rows) != 7 {
		t.Fatalf("runs lists %d runs:\n%s", len(rows), list)
	}
	shown := map[string]int{}
	for _, r := range rows {
		shown[strings.Fields(r)[1]]++
	}
	for name, n := range shown {
		_, out, errs := runCLI("stats", "--runs-dir", runs, "--blueprint", name, "--format", "json")
		if !strings.Contains(out, fmt.Sprintf(`"runs": %d,`, n)) {
			t.Errorf("runs shows %d run(s) of %s; stats --blueprint %s counts otherwise:\n%s%s", n, name, name, out, errs)
		}
	}
}

// TestJSONKeysOneCase: every --format json output uses snake_case keys
// (stats mixed "Runs" and "MedianMS" with "name").
func TestJSONKeysOneCase(t *testing.T) {
	runs := statsRuns(t)
	for _, args := range [][]string{
		{"stats", "--runs-dir", runs, "--format", "json"},
		{"runs", "--runs-dir", runs, "--format", "json"},
		{"show", "r2", "--runs-dir", runs, "--format", "json"},
		{"validate", "fix-failing-test", "--format", "json"},
		{"sandbox", "check", "--format", "json"},
	} {
		_, out, errs := runCLI(args...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%v: not JSON: %v\n%s%s", args, err, out, errs)
			continue
		}
		if bad := notSnakeCase(v); len(bad) > 0 {
			t.Errorf("%v: keys not in snake_case: %v", args, bad)
		}
	}
}
