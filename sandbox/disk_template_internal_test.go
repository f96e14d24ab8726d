//go:build linux

package sandbox

import (
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDiskImageFromTemplate: a box's disk image is a sparse copy of a
// formatted template: a valid ext4 filesystem of exactly the limit's
// size holding a few MiB, in its own file. A template anyone else could
// have written (or a symlink in its place) is never copied: it is
// formatted again.
func TestDiskImageFromTemplate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "templates")
	waitSpare() // a spare being made reads imageTemplateDir
	defer func(f func() string) { imageTemplateDir = f }(imageTemplateDir)
	defer waitSpare()
	imageTemplateDir = func() string { return dir }
	const size = 256 << 20
	valid := func(p string) {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Size != size || st.Blocks*512 > 8<<20 {
			t.Fatalf("%s: %d bytes, %d on disk; want %d, sparse", p, st.Size, st.Blocks*512, size)
		}
		if out, err := exec.Command("e2fsck", "-n", "-f", p).CombinedOutput(); err != nil {
			t.Fatalf("e2fsck %s: %v\n%s", p, err, out)
		}
	}
	img := filepath.Join(t.TempDir(), "a.img")
	if err := makeImage(img, size); err != nil {
		t.Fatal(err)
	}
	valid(img)
	tmpl, err := imageTemplate(size)
	if err != nil {
		t.Fatal(err)
	}
	var a, b unix.Stat_t
	unix.Stat(img, &a)
	unix.Stat(tmpl, &b)
	if a.Ino == b.Ino {
		t.Fatal("the box's image is the template itself")
	}
	for what, tamper := range map[string]func(){
		"world-writable": func() {
			f, _ := os.OpenFile(tmpl, os.O_WRONLY, 0)
			f.WriteAt(make([]byte, 4096), 0) // no superblock any more
			f.Close()
			os.Chmod(tmpl, 0o666)
		},
		"a symlink": func() { os.Remove(tmpl); os.Symlink("/dev/zero", tmpl) },
	} {
		tamper()
		img := filepath.Join(t.TempDir(), "b.img")
		if err := makeImage(img, size); err != nil {
			t.Fatalf("%s template: %v", what, err)
		}
		valid(img)
		if ownedPrivate(tmpl, false) != nil {
			t.Fatalf("a %s template was left in place", what)
		}
	}
}

// TestAttackDiskTemplateStaysClean: every box's disk is a copy of one
// template, so a box that writes everywhere it can (its workspace, /tmp,
// home, a cache, the template's host path, any loop device) must change
// neither the template nor what the next box starts with.
func TestAttackDiskTemplateStaysClean(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "templates")
	waitSpare() // a spare being made reads imageTemplateDir
	defer func(f func() string) { imageTemplateDir = f }(imageTemplateDir)
	defer waitSpare()
	imageTemplateDir = func() string { return dir }
	const size = 64 << 20
	tmpl, err := imageTemplate(size)
	if err != nil {
		t.Fatal(err)
	}
	before := fileDigest(t, tmpl)
	policy := Policy{Limits: Limits{DiskBytes: size},
		Caches: []Cache{{Host: t.TempDir(), Box: HomeDir + "/.cache/c", Env: "CACHE"}}}
	start := func() *Box {
		b, err := Start(context.Background(), Options{Policy: policy, Snapshot: t.TempDir(), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	run := func(b *Box, script string) string {
		t.Helper()
		res, err := b.Exec(context.Background(), Command{Args: []string{"sh", "-c", script}, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Output)
	}
	places := "/work /tmp $HOME $CACHE"
	first := start()
	run(first, "for d in "+places+"; do echo planted > $d/planted; mkdir -p $d/dir && head -c 1M /dev/urandom > $d/dir/big; done; sync")
	if out := run(first, "echo x >> "+tmpl+" && echo TEMPLATE-WRITTEN; for l in /dev/loop*; do [ -e $l ] && echo x > $l && echo LOOP-WRITTEN; done; true"); strings.Contains(out, "WRITTEN") {
		t.Errorf("BREACH: the box wrote through to the host: %s", out)
	}
	first.Close()
	if fileDigest(t, tmpl) != before {
		t.Fatal("BREACH: a box's writes reached the disk template")
	}
	if err := ownedPrivate(tmpl, false); err != nil {
		t.Fatal(err)
	}
	second := start()
	// $HOME holds the cache's mount point.
	if out := run(second, "for d in "+places+"; do ls -A $d; done | grep -vx .cache; stat -c %a /tmp"); out != "1777\n" {
		t.Fatalf("BREACH: the next box's disk is not fresh, it shows:\n%s", out)
	}
}

func fileDigest(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}
