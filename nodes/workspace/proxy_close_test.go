package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/secrets"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestStartProxyStopReleasesEverything: the egress proxy's two log files,
// its listener and its socket directory are all released by stop, so a
// long-lived embedder running many allowlist runs leaks nothing.
func TestStartProxyStopReleasesEverything(t *testing.T) {
	runDir := t.TempDir()
	before := openFDs(t)
	sock, stop, err := startProxy(runDir, sandbox.Policy{Network: sandbox.NetworkAllowlist, AllowHosts: []string{"example.com"}}, Options{}, secrets.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	if openFDs(t) <= before {
		t.Fatal("startProxy opened nothing; the test cannot tell whether stop closes")
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("socket: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if n := openFDs(t); n != before {
		t.Errorf("open file descriptors: %d before startProxy, %d after stop", before, n)
	}
	if _, err := os.Stat(filepath.Dir(sock)); !os.IsNotExist(err) {
		t.Errorf("socket directory %s left behind (stat: %v)", filepath.Dir(sock), err)
	}
	for _, name := range []string{"audit.log", "alerts.jsonl"} {
		if _, err := os.Stat(filepath.Join(runDir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
