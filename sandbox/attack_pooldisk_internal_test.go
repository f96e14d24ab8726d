//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackPlantedPoolDiskIsNeverAdopted: the disks made ahead wait in
// the template directory, which other harnesses share (and a harness of
// a previous boot, or of another PID namespace, may have had this
// harness's pid). An image someone left there under the name this
// harness would give its next spare disk must not become a new box's
// disk: the box must see nothing of it. The attack plants, under every
// name the next spares could take, an image whose home holds a file, and
// then starts boxes from the pool.
func TestAttackPlantedPoolDiskIsNeverAdopted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the disk needs root")
	}
	const size = 64 << 20
	start := func() *Box {
		b, err := Start(context.Background(), Options{Policy: Policy{Limits: Limits{DiskBytes: size}}, Workspace: t.TempDir(), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	start().Close() // fill the pool
	waitSpare()
	dir, seq := imageTemplateDir(), poolDiskSeq.Load()
	for n := seq + 1; n <= seq+8; n++ {
		p := filepath.Join(dir, fmt.Sprintf("pool-%d-%d.img", os.Getpid(), n))
		plantImage(t, p, size)
		t.Cleanup(func() { os.Remove(p) })
	}
	pooled := 0
	for try := 0; try < 6 && pooled < 2; try++ {
		b := start()
		if b.pooled {
			pooled++
		}
		res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", "cat $HOME/planted 2>/dev/null; true"}, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Output), "planted") {
			t.Fatalf("BREACH: a box's disk is an image left in the template directory (pooled %v): %q", b.pooled, res.Output)
		}
		b.Close()
		waitSpare()
	}
	if pooled == 0 {
		t.Fatal("no box came from the pool (the test proves nothing)")
	}
}

// plantImage formats an image of size bytes at path laid out as a box's
// disk, with a file in its home, marked as written in this boot.
func plantImage(t *testing.T, path string, size int64) {
	t.Helper()
	tree := t.TempDir()
	for _, l := range diskLayout {
		if err := os.Mkdir(filepath.Join(tree, l.name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(tree, l.name), l.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, diskHome, "planted"), []byte("planted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(path)
	if err := formatImage(path, size, tree); err != nil {
		t.Fatal(err)
	}
	if err := markBoot(path); err != nil {
		t.Fatal(err)
	}
}
