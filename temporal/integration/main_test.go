package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

// server is the Temporal test server the tests share (see devserver/).
var server struct {
	hostPort, namespace string
}

// TestMain builds sandgate-temporal (the binary tests run it) and builds
// and starts the dev server (its own module, so its dependencies stay out
// of this one; $SANDGATE_DEVSERVER names one already built), and lets the
// test binary serve the sandbox's re-executed helpers.
func TestMain(m *testing.M) {
	sandbox.Main()
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startServer() (func(), error) {
	dir, err := os.MkdirTemp("", "sandgate-devserver-")
	if err != nil {
		return nil, err
	}
	if err := buildBinary(dir); err != nil {
		return nil, fmt.Errorf("build sandgate-temporal: %w", err)
	}
	// .ci/run builds the server once, beside the main module's tests, and
	// names it here: linking it again costs about 2.5 GB and a minute.
	bin := os.Getenv("SANDGATE_DEVSERVER")
	if bin == "" {
		bin = filepath.Join(dir, "devserver")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir, build.Stderr = "devserver", os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build the dev server: %w", err)
		}
	}
	devserverBin = bin
	cmd, stdin, hostPort, ns, err := launchServer(bin)
	if err != nil {
		return nil, err
	}
	server.hostPort, server.namespace = hostPort, ns
	return func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		os.RemoveAll(dir)
	}, nil
}

// devserverBin is the dev server binary TestMain started (restart_test.go
// starts more of it).
var devserverBin string

// launchServer starts the dev server binary with args and reads the
// address and namespace it prints once ready; closing stdin stops it.
func launchServer(bin string, args ...string) (*exec.Cmd, io.WriteCloser, string, string, error) {
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, "", "", err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, "", "", fmt.Errorf("dev server did not start: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 2 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, "", "", fmt.Errorf("dev server said %q", line)
	}
	return cmd, stdin, f[0], f[1], nil
}

func dial(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: server.hostPort, Namespace: server.namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// host is one worker host: its two workers and its run directories.
type host struct {
	h       *temporal.Host
	workers []worker.Worker
	once    sync.Once
}

func (h *host) stop() {
	h.once.Do(func() {
		for _, w := range h.workers {
			w.Stop()
		}
		_ = h.h.Close() // as the process's exit would: the boxes die
	})
}

// startHost starts a worker host on queue. A nil registry means the
// built-in nodes in a sandboxed workspace; otherwise the test node types
// run in the repository directory.
func startHost(t testing.TB, c client.Client, queue, name string, sandboxed bool) *host {
	t.Helper()
	h := &temporal.Host{Name: name, Runtime: &runtime.Runtime{RunsDir: t.TempDir()}}
	if sandboxed {
		h.Runtime.Registry, h.Prepare = nodes.NewRegistry(), runfixture.Sandboxed
	} else {
		h.Runtime.Registry, h.Runtime.NoSync = testnodes.Registry(), true
	}
	return serveHost(t, c, queue, h)
}

// serveHost starts h's workers on queue, stopped when the test ends.
func serveHost(t testing.TB, c client.Client, queue string, h *temporal.Host) *host {
	t.Helper()
	hp := &host{h: h, workers: temporal.NewWorkers(c, queue, h)}
	for _, w := range hp.workers {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(hp.stop)
	return hp
}

// start starts a run of src on queue.
func start(t testing.TB, c client.Client, queue, src string, in temporal.RunInput) client.WorkflowRun {
	t.Helper()
	in.File, in.Source = "bp.yaml", []byte(src)
	wr, err := temporal.Start(context.Background(), c, queue, fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano()), "bp", in)
	if err != nil {
		t.Fatal(err)
	}
	firstRuns.Store(wr.GetID(), wr.GetRunID())
	return wr
}

// firstRuns maps a workflow id started here to its first execution's run
// id, taken before Get follows a continue-as-new chain: the dev server
// (v1.30.8) leaves the start response's first_execution_run_id empty, so
// the SDK's GetFirstExecutionRunID is "" against it.
var firstRuns sync.Map

func result(t testing.TB, wr client.WorkflowRun) temporal.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var st temporal.Status
	if err := wr.Get(ctx, &st); err != nil {
		t.Fatalf("run %s: %v", wr.GetID(), err)
	}
	return st
}

// waitFor polls the run's status until ok says so.
func waitFor(t testing.TB, c client.Client, wr client.WorkflowRun, what string, ok func(temporal.Status) bool) temporal.Status {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st, err := temporal.QueryRun(context.Background(), c, wr.GetID())
		if err == nil && ok(st) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s: never %s", wr.GetID(), what)
	return temporal.Status{}
}

// journal reads the run's journal in dir.
func journal(t testing.TB, dir string) []runtime.Event {
	t.Helper()
	events, err := runtime.ReadJournal(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return events
}
