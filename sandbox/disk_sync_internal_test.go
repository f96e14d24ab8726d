//go:build linux

package sandbox

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskImageFromAnotherBootIsChecked: the disk is mounted without
// write barriers, so an image a previous boot of the host wrote may be
// torn. A resumed run's image from another boot is repaired by e2fsck
// before it is mounted, and one e2fsck cannot repair fails the box; an
// image this boot wrote is trusted as it is.
func TestDiskImageFromAnotherBootIsChecked(t *testing.T) {
	if bootID() == nil {
		t.Skip("no boot id on this kernel: every resume is checked")
	}
	dir := t.TempDir()
	waitSpare() // a spare being made reads imageTemplateDir
	defer func(f func() string) { imageTemplateDir = f }(imageTemplateDir)
	defer waitSpare()
	imageTemplateDir = func() string { return filepath.Join(dir, "templates") }
	img := filepath.Join(dir, "disk.img")
	if err := makeImage(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	boot := func() []byte {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(img, bootAttr, buf)
		if err != nil {
			t.Fatalf("the image records no boot: %v", err)
		}
		return buf[:n]
	}
	if !bytes.Equal(boot(), bootID()) {
		t.Fatalf("a new image records boot %q, want %q", boot(), bootID())
	}
	if err := unix.Setxattr(img, bootAttr, []byte("another-boot"), 0); err != nil {
		t.Fatal(err)
	}
	if err := checkAfterReboot(img); err != nil {
		t.Fatalf("a sound image from another boot: %v", err)
	}
	if !bytes.Equal(boot(), bootID()) {
		t.Fatal("a checked image does not record this boot")
	}

	// Garbage where the filesystem was: trusted from this boot (nothing
	// runs e2fsck on it), refused from another.
	junk := make([]byte, 1<<20)
	rand.Read(junk)
	if err := os.WriteFile(img, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(img, bootAttr, bootID(), 0); err != nil {
		t.Fatal(err)
	}
	if err := checkAfterReboot(img); err != nil {
		t.Fatalf("an image of this boot was checked: %v", err)
	}
	for _, remove := range []bool{false, true} {
		if remove {
			err := unix.Removexattr(img, bootAttr)
			if err != nil {
				t.Fatal(err)
			}
		} else if err := unix.Setxattr(img, bootAttr, []byte("another-boot"), 0); err != nil {
			t.Fatal(err)
		}
		if err := checkAfterReboot(img); err == nil {
			t.Fatalf("a torn image (boot record removed: %v) was accepted", remove)
		}
	}
}
