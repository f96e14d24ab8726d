//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestSeedReadsWriteNothing: a box seeded with a layer that deletes a
// file deep in the snapshot (a whiteout under directories the snapshot
// also holds) only reads that path, and no directory of its layer
// changes; overlayfs used to record each merged directory's origin on its
// first lookup, so a reading command looked like a writing one to whoever
// watches the layer. A real write there still changes them.
func TestSeedReadsWriteNothing(t *testing.T) {
	base := t.TempDir()
	snap, seed := filepath.Join(base, "snap"), filepath.Join(base, "seed")
	for p, c := range map[string]string{"a/b/gone.go": "package b\n", "a/b/kept.go": "package b\n", "top.go": "package top\n"} {
		os.MkdirAll(filepath.Join(snap, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(snap, p), []byte(c), 0o644)
	}
	os.MkdirAll(filepath.Join(seed, "a", "b"), 0o755)
	if err := syscall.Mknod(filepath.Join(seed, "a", "b", "gone.go"), syscall.S_IFCHR, 0); err != nil {
		t.Fatal(err)
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, Seed: seed, StateDir: filepath.Join(base, "state")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Upper() == "" {
		t.Fatal("the box fell back to a copy instead of the overlay")
	}
	ctimes := func() map[string]int64 {
		out := map[string]int64{}
		for _, d := range []string{".", "a", "a/b"} {
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(b.Upper(), d), &st); err != nil {
				t.Fatal(err)
			}
			out[d] = st.Ctim.Nano()
		}
		return out
	}
	before := ctimes()
	res := sh(t, b, "ls -laR . >/dev/null && cat a/b/kept.go && ! test -e a/b/gone.go")
	if res.ExitCode != 0 || string(res.Output) != "package b\n" {
		t.Fatalf("reading the seeded workspace: exit %d %q", res.ExitCode, res.Output)
	}
	for d, c := range ctimes() {
		if c != before[d] {
			t.Errorf("reading changed %s in the box's layer", d)
		}
	}
	if res := sh(t, b, "echo x > a/b/new.go"); res.ExitCode != 0 {
		t.Fatalf("write: exit %d %q", res.ExitCode, res.Output)
	}
	if after := ctimes(); after["a/b"] == before["a/b"] {
		t.Error("a file created in a/b left the layer's a/b unchanged")
	}
}
