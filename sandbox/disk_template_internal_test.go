//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskImageFromTemplate: a box's disk image is a sparse copy of a
// formatted template: a valid ext4 filesystem of exactly the limit's
// size holding a few MiB, in its own file. A template anyone else could
// have written (or a symlink in its place) is never copied: it is
// formatted again.
func TestDiskImageFromTemplate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "templates")
	defer func(f func() string) { imageTemplateDir = f }(imageTemplateDir)
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
