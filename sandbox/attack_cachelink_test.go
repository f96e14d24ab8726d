//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackCacheThroughPlantedLink: a run's home directory is on its
// disk, which a resumed run's next box keeps. A box plants symbolic links
// in its home where the next box's caches are mounted (~/.cache, ~/go
// pointing at host directories, as hostile code would): init, which
// builds the next box before it pivots and so still resolves absolute
// links against the host, must not create, chown or mount anything
// through them on the host. The box fails to start, or starts with its
// caches in its own home; the host directories are untouched.
func TestAttackCacheThroughPlantedLink(t *testing.T) {
	state, target := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(target, "pkg"), 0o755)
	var before syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(target, "pkg"), &before); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	os.WriteFile(filepath.Join(cache, "warm"), []byte("cached\n"), 0o644)
	start := func(p sandbox.Policy) (*sandbox.Box, error) {
		b, err := sandbox.Start(context.Background(), sandbox.Options{Policy: p, Workspace: t.TempDir(), StateDir: state})
		if err == nil {
			t.Cleanup(func() { b.Close() })
		}
		return b, err
	}
	a, err := start(sandbox.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	res := sh(t, a, "rm -rf ~/.cache ~/go && ln -s "+target+" ~/.cache && ln -s "+target+" ~/go && ls -l ~")
	if res.ExitCode != 0 {
		t.Fatalf("the first box could not plant its links: %s", res.Output)
	}
	a.Close()
	b, err := start(sandbox.Policy{Caches: []sandbox.Cache{
		{Host: cache, Box: sandbox.HomeDir + "/.cache/go-build"},
		{Host: cache, Box: sandbox.HomeDir + "/go/pkg/sumdb/sum.golang.org"},
	}})
	if err == nil {
		res = sh(t, b, "cat ~/.cache/go-build/warm ~/go/pkg/sumdb/sum.golang.org/warm")
		t.Logf("the second box started: %q", res.Output)
	} else {
		t.Logf("the second box failed to start (fail closed): %v", err)
	}
	for _, p := range []string{"go-build", "pkg/sumdb"} {
		if _, err := os.Lstat(filepath.Join(target, p)); err == nil {
			t.Errorf("BREACH: init made %s on the host through the box's link", filepath.Join(target, p))
		}
	}
	var after syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(target, "pkg"), &after); err != nil || after.Uid != before.Uid || after.Gid != before.Gid {
		t.Errorf("BREACH: init chowned the host's %s/pkg through the box's link (%d:%d, was %d:%d)", target, after.Uid, after.Gid, before.Uid, before.Gid)
	}
	if err == nil && !strings.Contains(string(res.Output), "cached") {
		t.Errorf("the box started without its caches: %q", res.Output)
	}
}
