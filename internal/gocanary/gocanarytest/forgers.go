package gocanarytest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// HostExec runs a box command in dir on the host, as the box would run
// it (a gocanary.Exec): for tests and benchmarks that play the box's part
// with sh in a temporary module.
func HostExec(dir string) func(context.Context, sandbox.Command) (*sandbox.Result, error) {
	return func(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
		if c.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.Timeout)
			defer cancel()
		}
		cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(c.Stdin)
		out, err := cmd.CombinedOutput()
		res := &sandbox.Result{Output: out}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			res.ExitCode = ee.ExitCode()
		case err != nil:
			return nil, err
		}
		return res, nil
	}
}

// Forger is one attack: a non-test Go file of the attacked package.
type Forger struct {
	Name, File, Source string
	// OnlyKnown: it rewrites only the results of tests that the package's
	// test files on disk declare (or whose seals it found). With every
	// test file it could read gone when the binary runs (a grader's
	// held-out files replacing the visible ones), it forges nothing.
	OnlyKnown bool
}

// Forgers returns the forgers as files of package pkg.
func Forgers(pkg string) []Forger {
	out := make([]Forger, 0, len(forgers))
	for _, f := range forgers {
		f.Source = strings.Replace(f.Source, "package calc", "package "+pkg, 1)
		out = append(out, f)
	}
	return out
}

// reexec is the common part: the binary's init re-runs the binary with
// the same arguments, captures the real report, prints forge(report)
// instead and exits 0 before any test runs. None of it is test-mode
// detection the static check knows (the binary's name is read, not
// testing.Testing).
const reexec = `package calc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func init() {
	exe, err := os.Executable()
	if err != nil || !strings.HasSuffix(exe, "."+"te"+"st") || os.Getenv("CALC_FORGER_CHILD") != "" {
		return
	}
	c := exec.Command(exe, os.Args[1:]...)
	c.Env = append(os.Environ(), "CALC_FORGER_CHILD=1")
	out, _ := c.CombinedOutput()
	os.Stdout.Write(forge(out))
	os.Exit(0)
}

// known is every test name the package's visible test files declare.
func known() map[string]bool {
	out := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	re := regexp.MustCompile("(?m)^func (Test[A-Za-z0-9_]*)\\(")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range re.FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

var frame = regexp.MustCompile("^(\x16?)--- (FAIL|PASS|SKIP): ([^ ]+)")

func top(name string) string { n, _, _ := strings.Cut(name, "/"); return n }

var (
	_ = strconv.Itoa
	_ = bytes.Split
	_ = known
	_ = top
)
`

var forgers = []Forger{
	{
		// The attack of issue 23: every failure turns into a pass but the
		// one whose output shows the old canary's message.
		Name: "re-runs the binary and passes every failure but the canary's message",
		File: "zz_spare_message.go",
		Source: reexec + `
func forge(out []byte) []byte {
	lines := bytes.Split(out, []byte("\n"))
	var block []byte
	for i, l := range lines {
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" && !bytes.Contains(block, []byte("len = ")) {
			lines[i] = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		}
		if bytes.Contains(l, []byte("=== RUN")) || frame.Match(l) {
			block = nil
		}
		block = append(append(block, l...), '\n')
	}
	out = bytes.Join(lines, []byte("\n"))
	return bytes.ReplaceAll(out, []byte("\x16FAIL\n"), []byte("\x16PASS\n"))
}
`,
	},
	{
		// Elimination by name: the package's visible test files name every
		// real test, so any other name is the canary: pass every failure of
		// a known test, leave the others as they are.
		Name:      "passes the failures of the tests its package's files declare, leaves the rest",
		File:      "zz_known_names.go",
		OnlyKnown: true,
		Source: reexec + `
func forge(out []byte) []byte {
	k := known()
	lines := bytes.Split(out, []byte("\n"))
	for i, l := range lines {
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" && k[top(string(m[3]))] {
			lines[i] = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		}
	}
	return bytes.Join(lines, []byte("\n"))
}
`,
	},
	{
		// A forger that cannot tell a canary that must fail from one that
		// must pass fails everything it does not recognise.
		Name: "passes the failures of known tests and fails every test it does not know",
		File: "zz_fail_unknown.go",
		Source: reexec + `
func forge(out []byte) []byte {
	k := known()
	lines := bytes.Split(out, []byte("\n"))
	for i, l := range lines {
		m := frame.FindSubmatch(l)
		switch {
		case m == nil:
		case k[top(string(m[3]))]:
			lines[i] = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		default:
			lines[i] = bytes.Replace(bytes.Replace(l, []byte("--- PASS"), []byte("--- FAIL"), 1), []byte("--- SKIP"), []byte("--- FAIL"), 1)
		}
	}
	return bytes.Join(lines, []byte("\n"))
}
`,
	},
	{
		// The same, dropping unknown tests from the report altogether.
		Name: "passes the failures of known tests and drops every test it does not know",
		File: "zz_drop_unknown.go",
		Source: reexec + `
func forge(out []byte) []byte {
	k := known()
	var keep [][]byte
	cur := ""
	for _, l := range bytes.Split(out, []byte("\n")) {
		s := strings.TrimPrefix(string(l), "\x16")
		for _, p := range []string{"=== RUN   ", "=== NAME  ", "=== CONT  ", "=== PAUSE ", "--- FAIL: ", "--- PASS: ", "--- SKIP: "} {
			if r, ok := strings.CutPrefix(s, p); ok {
				cur, _, _ = strings.Cut(r, " ")
			}
		}
		if s == "PASS" || s == "FAIL" {
			cur = ""
		}
		if cur != "" && !k[top(cur)] {
			continue
		}
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" {
			l = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		}
		keep = append(keep, l)
	}
	out = bytes.Join(keep, []byte("\n"))
	return bytes.ReplaceAll(out, []byte("\x16FAIL\n"), []byte("\x16PASS\n"))
}
`,
	},
	{
		// A forger needs no token for a test the report never mentions:
		// it deletes every line of each known test that failed (its run,
		// output and result) and leaves the rest, canaries included, as
		// they ran. The failing canary fails, the passing one passes with
		// its token, and no sealed test claims a pass it did not earn.
		Name:      "deletes every line of the known tests that failed",
		File:      "zz_drop_failed.go",
		OnlyKnown: true,
		Source: reexec + `
func forge(out []byte) []byte {
	k := known()
	lines := bytes.Split(out, []byte("\n"))
	failed := map[string]bool{}
	for _, l := range lines {
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" && k[top(string(m[3]))] {
			failed[top(string(m[3]))] = true
		}
	}
	var keep [][]byte
	cur := ""
	for _, l := range lines {
		s := strings.TrimPrefix(string(l), "\x16")
		for _, p := range []string{"=== RUN   ", "=== NAME  ", "=== CONT  ", "=== PAUSE ", "--- FAIL: ", "--- PASS: ", "--- SKIP: "} {
			if r, ok := strings.CutPrefix(s, p); ok {
				cur, _, _ = strings.Cut(r, " ")
				cur = top(cur)
			}
		}
		if s == "PASS" || s == "FAIL" {
			cur = ""
		}
		if !failed[cur] {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}
`,
	},
	{
		// The report of a stashed binary is a file its own code can
		// reach: the binary sits in the run's directory beside the file
		// test2json writes its report to, which is read once every binary
		// is done. The forger puts an empty file in its place and exits
		// 0: its package vanishes from the report, with every seal and
		// canary in it. It needs no re-run and nothing the test-mode check
		// knows (os.Args[0] is read, not written or run).
		Name: "replaces its package's report with an empty file",
		File: "zz_vanish.go",
		Source: `package calc

import (
	"os"
	"path/filepath"
)

func init() {
	n := filepath.Dir(filepath.Dir(os.Args[0]))
	if _, err := os.Stat(filepath.Join(n, "out")); err != nil {
		return
	}
	os.WriteFile(filepath.Join(n, "out.new"), nil, 0o600)
	os.Rename(filepath.Join(n, "out.new"), filepath.Join(n, "out"))
	os.Exit(0)
}
`,
	},
	{
		// A forger that looks for the canary's sources: go test's overlay
		// (named in GOFLAGS or on its parent's command line) and what the
		// harness and go keep under /tmp or TMPDIR, and lifts every seal
		// token and canary name it finds.
		// With them it could pass any test; it must find nothing.
		Name:      "reads the overlay, /tmp and TMPDIR for the seals' tokens",
		File:      "zz_read_overlay.go",
		OnlyKnown: true,
		Source: reexec + `
var sealRe = regexp.MustCompile("func (Test[A-Za-z0-9_]*)\\([a-z0-9]+ \\*[a-z]+\\.T\\) \\{[a-z0-9]+\\.Cleanup\\(func\\(\\) \\{.*?else \\{ [a-z0-9]+\\.Logf\\(\"%d %d\", int64\\(([0-9]+)\\), int64\\(([0-9]+)\\)\\)")

func secrets() map[string]string {
	out := map[string]string{}
	seen := map[string]bool{}
	var look func(b []byte)
	look = func(b []byte) {
		for _, m := range sealRe.FindAllSubmatch(b, -1) {
			out[string(m[1])] = string(m[2]) + " " + string(m[3])
		}
		// An overlay file names the replacement sources.
		for _, m := range regexp.MustCompile("\"(/[^\"]+[.]go)\"").FindAllSubmatch(b, -1) {
			if src, err := os.ReadFile(string(m[1])); err == nil && !seen[string(m[1])] {
				seen[string(m[1])] = true
				look(src)
			}
		}
	}
	for _, a := range strings.Fields(os.Getenv("GOFLAGS")) {
		if p, ok := strings.CutPrefix(a, "-overlay="); ok {
			b, _ := os.ReadFile(p)
			look(b)
		}
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/cmdline"); err == nil {
		for _, a := range bytes.Split(b, []byte{0}) {
			if p, ok := strings.CutPrefix(string(a), "-overlay="); ok {
				b, _ := os.ReadFile(p)
				look(b)
			}
		}
	}
	// The box's /tmp holds little else; on a shared host, only what
	// the harness and go put there is worth the walk. The go command
	// works in GOTMPDIR, else TMPDIR: one that is not /tmp is its own
	// (a test's), walked whole.
	tops, _ := filepath.Glob("/tmp/*sandgate*")
	work := map[string]bool{".": true}
	for _, d := range []string{os.Getenv("GOTMPDIR"), os.TempDir()} {
		if d = filepath.Clean(d); work[d] {
			continue
		}
		work[d] = true
		if d != "/tmp" {
			tops = append(tops, d)
			continue
		}
		more, _ := filepath.Glob("/tmp/go-build*")
		tops = append(tops, more...)
	}
	for _, top := range tops {
		_ = filepath.Walk(top, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() && fi.Size() < 8<<20 {
				b, _ := os.ReadFile(p)
				look(b)
			}
			return nil
		})
	}
	return out
}

func forge(out []byte) []byte {
	sec := secrets()
	k := known()
	lines := bytes.Split(out, []byte("\n"))
	var res [][]byte
	for _, l := range lines {
		if m := frame.FindSubmatch(l); m != nil && string(m[2]) == "FAIL" && (k[top(string(m[3]))] || sec[string(m[3])] != "") {
			if tok := sec[string(m[3])]; tok != "" {
				res = append(res, []byte("    forged.go:1: "+tok))
			}
			l = bytes.Replace(l, []byte("--- FAIL"), []byte("--- PASS"), 1)
		}
		res = append(res, l)
	}
	return bytes.Join(res, []byte("\n"))
}
`,
	},
}
