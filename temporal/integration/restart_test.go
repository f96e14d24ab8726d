package integration

import (
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/temporal"
	"github.com/sandgate/sandgate/temporal/internal/runfixture"
)

// fileServer is a dev server of its own (`devserver -db FILE -port N`)
// that a test can kill and start again on the same file and address:
// the shared one TestMain starts lives in memory and cannot come back.
type fileServer struct {
	db, port            string
	cmd                 *exec.Cmd
	stdin               io.WriteCloser
	hostPort, namespace string
}

// startFileServer starts a file-backed dev server on a free port; it is
// stopped when the test ends.
func startFileServer(t *testing.T) *fileServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s := &fileServer{db: filepath.Join(t.TempDir(), "temporal.db"), port: port}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd == nil {
			return
		}
		s.stdin.Close()
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	})
	return s
}

func (s *fileServer) start() error {
	cmd, stdin, hostPort, ns, err := launchServer(devserverBin, "-db", s.db, "-port", s.port)
	if err != nil {
		return err
	}
	s.cmd, s.stdin, s.hostPort, s.namespace = cmd, stdin, hostPort, ns
	return nil
}

// restart SIGKILLs the server and starts it again on the same file and
// port, and returns how long it was away (kill to ready). SIGKILL rather
// than a graceful stop: it is the harder case (no shard released, no
// membership left, whatever SQLite had not committed gone) and the one a
// crashed or OOM-killed server gives; a graceful stop of this server
// also takes seconds of its own.
func (s *fileServer) restart() (time.Duration, error) {
	t0 := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
	if err := s.start(); err != nil {
		return time.Since(t0), err
	}
	return time.Since(t0), nil
}

// use points the test's clients and workers (dial, connFlags) at s until
// the test ends. Tests here do not run in parallel.
func (s *fileServer) use(t *testing.T) {
	saved := server
	server.hostPort, server.namespace = s.hostPort, s.namespace
	t.Cleanup(func() { server = saved })
}

// restartBP is the soak's chain with a longer sleep in c, so a server
// restart lands while c runs.
var restartBP = runfixture.AppendsBP("soak", "soak.txt", soakLines, map[string]string{"c": "sleep 6"})

// TestRunAcrossServerRestart: a boxed run whose node c is running on a
// `sandgate-temporal worker` process when the Temporal server is killed
// and started again on its file ends as it would have without: succeeded
// (its check node found a b c d, each once), every node finished once in
// its journal, on the same host, and the worker process is still up (it
// reconnected rather than exiting).
func TestRunAcrossServerRestart(t *testing.T) {
	s := startFileServer(t)
	s.use(t)
	c := dial(t)
	w := binWorker(t, "srv-restart", "srv-restart-host", t.TempDir())
	wr := start(t, c, "srv-restart", restartBP, temporal.RunInput{Repo: gitRepo(t)})
	waitFor(t, c, wr, "running c", func(st temporal.Status) bool { return st.NodeRuns >= 3 })
	down, err := s.restart()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server away %s", down.Round(time.Millisecond))
	st := result(t, wr)
	if st.Status != runtime.StatusSucceeded || st.Host != "srv-restart-host" {
		t.Fatalf("after the restart: %+v", st)
	}
	count := map[string]int{}
	for _, ev := range journal(t, st.Dir) {
		if ev.Type == runtime.EvNodeFinished {
			count[ev.Node]++
		}
	}
	for _, n := range soakNodes {
		if count[n] != 1 {
			t.Errorf("node %s finished %d times: %v", n, count[n], count)
		}
	}
	select {
	case <-w.done:
		t.Fatalf("the worker exited (%d):\n%s", w.code, w.output())
	default:
	}
}
