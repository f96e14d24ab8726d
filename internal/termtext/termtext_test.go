package termtext

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The attack strings of issue 24: an agent's reason that erases the line
// and writes a fake verdict, an OSC 8 link, an OSC 52 clipboard write, a
// bidi override, the 8-bit CSI and bytes that are not UTF-8.
func TestText(t *testing.T) {
	for _, c := range []struct{ in, text, line string }{
		{"plain words", "plain words", "plain words"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\nlines\tand a tab`},
		{"\x1b[2K\rverdict: every gate passed", `\x1b[2K\rverdict: every gate passed`, `\x1b[2K\rverdict: every gate passed`},
		{"\x1b]8;;https://evil\x07link\x1b]8;;\x07", `\x1b]8;;https://evil\alink\x1b]8;;\a`, `\x1b]8;;https://evil\alink\x1b]8;;\a`},
		{"\x1b]52;c;Y3VybA==\x07", `\x1b]52;c;Y3VybA==\a`, `\x1b]52;c;Y3VybA==\a`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"\u009b2K", `\u009b2K`, `\u009b2K`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`, `bad \xff\xfe utf-8`},
		{"del\x7f nul\x00", `del\x7f nul\x00`, `del\x7f nul\x00`},
		{"café ✓ 漢字", "café ✓ 漢字", "café ✓ 漢字"},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{`back\slash`, `back\slash`, `back\slash`},
	} {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

// TestName: names are quoted as git quotes them (the file name of the
// attack, notes ESC[2K ESC[1A.txt, becomes git's "notes\033[2K\033[1A.txt"),
// and every quoted form reads back with strconv.Unquote.
func TestName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"calc.go", "calc.go"},
		{"dir/with space.go", "dir/with space.go"},
		{"café.go", "café.go"},
		{"notes\x1b[2K\x1b[1A.txt", `"notes\033[2K\033[1A.txt"`},
		{"tab\there", `"tab\there"`},
		{"new\nline", `"new\nline"`},
		{`quote"d`, `"quote\"d"`},
		{`back\slash`, `"back\\slash"`},
		{"bidi\u202e.txt", `"bidi\342\200\256.txt"`},
		{"c1\u009b.txt", `"c1\302\233.txt"`},
		{"bad\xff.txt", `"bad\377.txt"`},
		{`"starts with a quote`, `"\"starts with a quote"`},
	} {
		got := Name(c.in)
		if got != c.want {
			t.Errorf("Name(%q) = %s, want %s", c.in, got, c.want)
		}
		if back, err := strconv.Unquote(got); got != c.in && (err != nil || back != c.in) {
			t.Errorf("Unquote(%s) = %q, %v; want %q", got, back, err, c.in)
		}
	}
}

// TestNameAsGit: on names git quotes whatever core.quotePath says
// (controls, quotes, backslashes), Name writes exactly what git does.
func TestNameAsGit(t *testing.T) {
	dir := t.TempDir()
	names := []string{"notes\x1b[2K\x1b[1A.txt", "tab\there", "new\nline", `quote"d`, `back\slash`, "plain.txt"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := gitIn(dir, args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return out
	}
	git("init", "-q")
	listed := strings.Split(strings.TrimRight(git("-c", "core.quotePath=false", "ls-files", "--others"), "\n"), "\n")
	want := map[string]bool{}
	for _, l := range listed {
		want[l] = true
	}
	for _, n := range names {
		if !want[Name(n)] {
			t.Errorf("Name(%q) = %s; git lists %q", n, Name(n), listed)
		}
	}
}

// TestJSON: what encoding/json leaves raw for a terminal is escaped, and
// the JSON still decodes to the same value.
func TestJSON(t *testing.T) {
	in := map[string]string{"reason": "x\x1b[2K\u009b2J\u202edel\x7f", "ok": "café"}
	b, _ := json.Marshal(in)
	got := JSON(b)
	checkPrintable(t, "JSON", string(b), string(got), "")
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["reason"] != in["reason"] || back["ok"] != "café" {
		t.Fatalf("%s decodes to %q, %v", got, back, err)
	}
	if string(JSON([]byte(`{"a":"plain"}`))) != `{"a":"plain"}` {
		t.Fatal("plain JSON changed")
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer{W: &b}
	n, err := w.Write([]byte("diff\n+\x1b]52;c;eA==\x07\n"))
	if err != nil || n != 19 || b.String() != "diff\n+\\x1b]52;c;eA==\\a\n" {
		t.Fatalf("wrote %d, %v: %q", n, err, b.String())
	}
}

func TestColors(t *testing.T) {
	var b bytes.Buffer
	if Colors(&b) {
		t.Error("a buffer is no terminal")
	}
	if got := Paint(false, Green, "✓"); got != "✓" {
		t.Errorf("Paint off = %q", got)
	}
	if got := Paint(true, Green, "✓"); got != "\x1b[32m✓\x1b[0m" {
		t.Errorf("Paint on = %q", got)
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		t.Setenv("NO_COLOR", "1")
		if Colors(tty) {
			t.Error("NO_COLOR set, still colours")
		}
	}
}

// checkPrintable fails when out holds a byte a terminal acts on; keep
// lists the control characters allowed through.
func checkPrintable(t *testing.T, fn, in, out, keep string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not UTF-8", fn, in, out)
	}
	for _, r := range out {
		if (r < 0x20 || r == 0x7f) && !strings.ContainsRune(keep, r) || dangerous(r) {
			t.Fatalf("%s(%q) = %q holds %U", fn, in, out, r)
		}
	}
}

// FuzzText: whatever the input, Text lets only newlines and tabs through
// among the controls, Line none, Name none; Text and Line are idempotent;
// Name reads back with strconv.Unquote (so it is injective), and leaves
// alone exactly the names that need no quoting.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2K\r", "a\u202eb", "\xff\xfe", "\u009b", `"q"`, "new\nline\ttab", "\u2028", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, line, name := Text(s), Line(s), Name(s)
		if b, err := json.Marshal(s); err == nil {
			j := JSON(b)
			checkPrintable(t, "JSON", s, string(j), "")
			var want, back string
			if json.Unmarshal(b, &want) != nil || json.Unmarshal(j, &back) != nil || back != want {
				t.Fatalf("JSON(%s) = %s reads back as %q, not %q", b, j, back, want)
			}
		}
		checkPrintable(t, "Text", s, text, "\n\t")
		checkPrintable(t, "Line", s, line, "")
		checkPrintable(t, "Name", s, name, "")
		if Text(text) != text || Line(line) != line {
			t.Fatalf("not idempotent: %q → %q, %q", s, text, line)
		}
		if strings.Count(text, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text(%q) = %q changed the line count", s, text)
		}
		if name == s {
			if needsQuote(s) {
				t.Fatalf("Name(%q) left a name that needs quoting", s)
			}
			return
		}
		back, err := strconv.Unquote(name)
		if err != nil || back != s {
			t.Fatalf("Name(%q) = %s reads back as %q, %v", s, name, back, err)
		}
	})
}

// gitIn runs git in dir.
func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// wrapped is a writer over another, as the CLI's redacting writer is.
type wrapped struct{ w *os.File }

func (w wrapped) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w wrapped) Unwrap() io.Writer           { return w.w }

// TestIsTerminalLooksThroughWrappers: the CLI wraps stdout in a redacting
// writer whenever a credential is in the environment; the destination,
// not the wrapper, decides whether progress may redraw and colour.
func TestIsTerminalLooksThroughWrappers(t *testing.T) {
	dev, err := os.OpenFile("/dev/null", os.O_WRONLY, 0) // a character device
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		w    io.Writer
		want bool
	}{
		{dev, true}, {wrapped{dev}, true}, {wrapped{file}, false}, {&bytes.Buffer{}, false},
		{Writer{W: dev}, false}, // the escaping writer is no terminal: its own escapes would be written out
	} {
		if got := IsTerminal(c.w); got != c.want {
			t.Errorf("IsTerminal(%T) = %v, want %v", c.w, got, c.want)
		}
	}
}
