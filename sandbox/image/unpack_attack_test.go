//go:build linux

package image_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox/image"
)

// TestImageUnpackRefusesEscapes plays hostile layers that try to write
// or link outside the tree; each fails the test if a file appears (or
// a link is made) outside it.
func TestImageUnpackRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel := strings.Repeat("../", 20) + strings.TrimPrefix(outside, "/")
	cases := map[string][][]ent{
		"symlink then file through it":        {{symlink("a", outside), file("a/pwned", "x")}},
		"symlink then dir through it":         {{symlink("a", outside), dir("a/pwned")}},
		"symlink in a lower layer":            {{symlink("a", outside)}, {file("a/pwned", "x")}},
		"relative symlink climbing out":       {{symlink("a", rel), file("a/pwned", "x")}},
		"symlink parent of a symlink":         {{symlink("a", outside), symlink("a/pwned", "/etc/passwd")}},
		"dotdot name":                         {{file("../../../../../../.."+outside+"/pwned", "x")}},
		"dotdot inside a name":                {{dir("d"), file("d/../../pwned", "x")}},
		"hard link out by dotdot":             {{hardlink("pwned", "../../../../../.."+secret)}},
		"hard link through a symlink":         {{symlink("a", outside), hardlink("pwned", "a/secret")}},
		"hard link to a host path":            {{hardlink("pwned", secret)}},
		"whiteout through a symlink":          {{symlink("a", outside)}, {file("a/.wh.secret", "")}},
		"opaque whiteout through a symlink":   {{symlink("a", outside)}, {file("a/.wh..wh..opq", "")}},
		"symlink replaced while file follows": {{dir("a")}, {symlink("a", outside)}, {file("a/pwned", "x")}},
	}
	for name, layers := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := leaseLayers(t, image.Limits{}, layers...)
			t.Logf("lease: %v", err)
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Fatalf("the layers wrote outside the tree: %v (lease error: %v)", entries, err)
			}
			if b, _ := os.ReadFile(secret); string(b) != "host secret" {
				t.Fatalf("the host file changed: %q", b)
			}
			if err == nil {
				// Whatever was unpacked must not share the host file.
				st, _ := os.Stat(secret)
				filepath.Walk(l.RootFS, func(p string, fi os.FileInfo, err error) error {
					if err == nil && os.SameFile(st, fi) {
						t.Errorf("%s is the host's file", p)
					}
					return nil
				})
			}
		})
	}
}

// TestImageUnpackAbsoluteNames: an absolute name lands in the tree.
func TestImageUnpackAbsoluteNames(t *testing.T) {
	name := "/sandgate-image-test-" + filepath.Base(t.TempDir())
	l, err := leaseLayers(t, image.Limits{}, []ent{file(name, "in the tree")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(name); err == nil {
		os.Remove(name)
		t.Fatalf("%s was written on the host", name)
	}
	if b, err := os.ReadFile(filepath.Join(l.RootFS, name)); err != nil || string(b) != "in the tree" {
		t.Fatalf("the file is not in the tree: %q %v", b, err)
	}
}

// TestImageUnpackDropsDevicesAndSetID: device nodes and FIFOs are not
// created, set-ID bits are stripped, ownership is the unpacker's.
func TestImageUnpackDropsDevicesAndSetID(t *testing.T) {
	suid := file("usr/bin/su", "#!/bin/sh\n")
	suid.mode = 0o6755
	l, err := leaseLayers(t, image.Limits{}, []ent{
		dir("dev"), {name: "dev/sda", typ: tar.TypeBlock, mode: 0o666}, {name: "dev/mem", typ: tar.TypeChar, mode: 0o666},
		{name: "fifo", typ: tar.TypeFifo, mode: 0o666}, suid,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"dev/sda", "dev/mem", "fifo"} {
		if _, err := os.Lstat(filepath.Join(l.RootFS, n)); err == nil {
			t.Errorf("%s was created", n)
		}
	}
	st, err := os.Stat(filepath.Join(l.RootFS, "usr/bin/su"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || st.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want -rwxr-xr-x without set-ID bits", st.Mode())
	}
	skipped, _ := os.ReadFile(filepath.Join(filepath.Dir(l.RootFS), "skipped.txt"))
	for _, n := range []string{"dev/sda", "dev/mem", "fifo", "usr/bin/su"} {
		if !strings.Contains(string(skipped), n) {
			t.Errorf("skipped.txt does not record %s:\n%s", n, skipped)
		}
	}
}

// TestImageUnpackBombs: a file over the byte cap and a layer over the
// entry cap are refused.
func TestImageUnpackBombs(t *testing.T) {
	big := file("big", strings.Repeat("x", 3<<20))
	if _, err := leaseLayers(t, image.Limits{Bytes: 1 << 20}, []ent{big}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a 3 MiB file under a 1 MiB cap: %v", err)
	}
	var many []ent
	for i := range 50 {
		many = append(many, file(strings.Repeat("f", i+1), ""))
	}
	if _, err := leaseLayers(t, image.Limits{Entries: 20}, many); err == nil || !strings.Contains(err.Error(), "entries") {
		t.Errorf("50 entries under a cap of 20: %v", err)
	}
}
