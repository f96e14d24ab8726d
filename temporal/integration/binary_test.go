package integration

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// binary is the sandgate-temporal command TestMain builds once.
var binary string

// buildBinary builds sandgate-temporal into dir (from the runner's module,
// beside this one).
func buildBinary(dir string) error {
	binary = filepath.Join(dir, "sandgate-temporal")
	build := exec.Command("go", "build", "-o", binary, "./cmd/sandgate-temporal")
	build.Dir, build.Stderr = "..", os.Stderr
	return build.Run()
}

// proc is a running sandgate-temporal with its output collected.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	code int
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// launch starts the binary; its stdout and stderr go to one buffer.
func launch(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the exit code; a process that outlives go test's deadline
// fails the test there (no timing assertion here).
func (p *proc) wait() int {
	<-p.done
	return p.code
}

// until polls the output until it matches re and returns the match.
func (p *proc) until(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for {
		if m := rx.FindStringSubmatch(p.output()); m != nil {
			return m
		}
		select {
		case <-p.done:
			t.Fatalf("exited %d before printing %q:\n%s", p.code, re, p.output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func connFlags(queue string) []string {
	return []string{"--temporal", server.hostPort, "--namespace", server.namespace, "--task-queue", queue}
}

// binWorker starts `sandgate-temporal worker` for host on queue, its runs
// under runs, and waits until it serves.
func binWorker(t *testing.T, queue, host, runs string) *proc {
	t.Helper()
	p := launch(t, append([]string{"worker", "--host-id", host, "--runs-dir", runs}, connFlags(queue)...)...)
	p.until(t, "serving "+regexp.QuoteMeta(queue))
	return p
}

// binRun starts `sandgate-temporal run` of src on repo.
func binRun(t *testing.T, queue, src, repo string, extra ...string) *proc {
	t.Helper()
	bp := filepath.Join(t.TempDir(), "bp.yaml")
	if err := os.WriteFile(bp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return launch(t, append(append([]string{"run", bp, "--repo", repo}, connFlags(queue)...), extra...)...)
}

// runDir reads the run directory from run's last line.
func runDir(t *testing.T, p *proc) string {
	t.Helper()
	m := regexp.MustCompile(`run directory (\S+)`).FindStringSubmatch(p.output())
	if m == nil {
		t.Fatalf("no run directory in:\n%s", p.output())
	}
	return m[1]
}

// TestBinaryRunExitCodes runs blueprints through the built binaries, a
// worker process and run processes, and checks run's exit codes as
// sandgate run's: 0 succeeded, 1 failed, 3 handed off, 2 usage.
func TestBinaryRunExitCodes(t *testing.T) {
	binWorker(t, "bin-codes", "bin-host", t.TempDir())
	repo := gitRepo(t)
	failing := strings.Replace(shellBP, `grep -q changed`, `grep -q nothing`, 1)
	handoff := "version: 1\nname: ask\nstart: edit\nnodes:\n  edit: {type: shell, run: \"true\", next: stuck}\n  stuck: {type: handoff, reason: a person decides}\n"
	for _, tc := range []struct {
		name, src string
		extra     []string
		code      int
		status    runtime.Status
	}{
		{"succeeded", shellBP, nil, 0, runtime.StatusSucceeded},
		{"failed", failing, nil, 1, runtime.StatusFailed},
		{"handed-off", handoff, []string{"--handoff-wait", "1s"}, 3, runtime.StatusHandedOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := binRun(t, "bin-codes", tc.src, repo, tc.extra...)
			if code := p.wait(); code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tc.code, p.output())
			}
			sum, err := runtime.Summarize(runDir(t, p))
			if err != nil || sum.Status != tc.status {
				t.Fatalf("record %+v %v, want %s", sum, err, tc.status)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no blueprint", append([]string{"run"}, connFlags("bin-codes")...)},
		{"blueprint invalid", append([]string{"run", writeFile(t, "version: 1\nname: x\nstart: nowhere\nnodes: {}\n")}, connFlags("bin-codes")...)},
		{"no server named", []string{"run", writeFile(t, shellBP), "--repo", repo}},
		{"unknown command", []string{"fly"}},
		{"worker stray argument", append([]string{"worker", "extra"}, connFlags("bin-codes")...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := launch(t, tc.args...)
			if code := p.wait(); code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", code, p.output())
			}
		})
	}
}

func writeFile(t *testing.T, s string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "bp.yaml")
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// procsWith returns the processes whose command line is exactly argv.
func procsWith(argv ...string) []string {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && string(b) == want {
			out = append(out, p)
		}
	}
	return out
}

func waitProcs(t *testing.T, present bool, argv ...string) {
	t.Helper()
	for (len(procsWith(argv...)) > 0) != present {
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBinaryRunInterrupt: Ctrl-C on `run` cancels the run (the kill
// switch): the box command dies, run exits 130, and the run's record on
// the worker host is finished as canceled.
func TestBinaryRunInterrupt(t *testing.T) {
	binWorker(t, "bin-int", "bin-int-host", t.TempDir())
	src := strings.Replace(shellBP, `run: "echo changed > hello.txt"`, `run: "sleep 318"`, 1)
	p := binRun(t, "bin-int", src, gitRepo(t))
	p.until(t, `▶ edit`)
	waitProcs(t, true, "sleep", "318")
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, p.output())
	}
	if left := procsWith("sleep", "318"); len(left) > 0 {
		t.Fatalf("box command still running after run exited: %v", left)
	}
	sum, err := runtime.Summarize(runDir(t, p))
	if err != nil || sum.Status != runtime.StatusCanceled || !strings.Contains(p.output(), "canceling the run") {
		t.Fatalf("record %+v %v:\n%s", sum, err, p.output())
	}
}

// TestBinaryWorkerInterrupt: Ctrl-C on a worker mid-node (the node runs
// longer than the worker's 5 s stop wait) stops it cleanly (exit 0, its
// box command killed) and keeps the run's state on the host:
// a worker started again with the same host id and runs directory picks
// the run up from disk and finishes it.
func TestBinaryWorkerInterrupt(t *testing.T) {
	runs := t.TempDir()
	w := binWorker(t, "bin-wint", "bin-wint-host", runs)
	src := strings.Replace(shellBP, `run: "echo changed > hello.txt"`, `run: "sleep 9.19; echo changed > hello.txt"`, 1)
	p := binRun(t, "bin-wint", src, gitRepo(t))
	id := p.until(t, `run (\S+) started`)[1]
	waitProcs(t, true, "sleep", "9.19")
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(); code != 0 {
		t.Fatalf("worker exit %d, want 0:\n%s", code, w.output())
	}
	if left := procsWith("sleep", "9.19"); len(left) > 0 {
		t.Fatalf("the worker exited and left its box command running: %v", left)
	}
	if _, err := os.Stat(filepath.Join(runs, id, "events.jsonl")); err != nil {
		t.Fatalf("the run's journal is gone after the worker stopped: %v", err)
	}
	binWorker(t, "bin-wint", "bin-wint-host", runs)
	if code := p.wait(); code != 0 {
		t.Fatalf("run exit %d after the worker restarted, want 0:\n%s", code, p.output())
	}
	sum, err := runtime.Summarize(filepath.Join(runs, id))
	if err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("record %+v %v", sum, err)
	}
}

// TestBinaryMissingServer: with no server at the address (nothing
// listening, or a listener that never speaks gRPC) worker and run end with
// a clear error and exit 2 instead of waiting forever. The time it took
// is logged, not asserted; a hang fails at go test's -timeout.
func TestBinaryMissingServer(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept and say nothing
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	bp, repo := writeFile(t, shellBP), gitRepo(t)
	for _, addr := range []string{refused, silent.Addr().String()} {
		for _, args := range [][]string{{"worker", "--runs-dir", t.TempDir()}, {"run", bp, "--repo", repo}} {
			t0 := time.Now()
			p := launch(t, append(args, "--temporal", addr)...)
			code := p.wait()
			t.Logf("%s against %s: exit %d after %s", args[0], addr, code, time.Since(t0).Round(time.Millisecond))
			if code != 2 || !strings.Contains(p.output(), "connect to Temporal at "+addr) {
				t.Fatalf("%s: exit %d, want 2 and a connect error:\n%s", args[0], code, p.output())
			}
		}
	}
}
