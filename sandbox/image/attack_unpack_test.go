//go:build linux

package image_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandgate/sandgate/sandbox/image"
)

// hostMarker is a file outside every tree that hostile layers aim at.
type hostMarker struct{ dir, secret string }

func newHostMarker(t *testing.T) hostMarker {
	t.Helper()
	d := t.TempDir()
	m := hostMarker{d, filepath.Join(d, "secret")}
	if err := os.WriteFile(m.secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// intact fails the test if the marker's directory gained or lost an
// entry or the secret changed.
func (m hostMarker) intact(t *testing.T, leaseErr error) {
	t.Helper()
	entries, _ := os.ReadDir(m.dir)
	if len(entries) != 1 {
		t.Fatalf("the layers changed a host directory: %v (lease: %v)", entries, leaseErr)
	}
	if b, _ := os.ReadFile(m.secret); string(b) != "host secret" {
		t.Fatalf("the host file changed: %q (lease: %v)", b, leaseErr)
	}
}

// TestAttackUnpackLinkEscapes: links and whiteouts that climb out of the
// tree by an absolute target, by .., or by a link swapped for a
// directory (and back) between layers.
func TestAttackUnpackLinkEscapes(t *testing.T) {
	m := newHostMarker(t)
	hostEtc := "sandgate-attack-" + filepath.Base(m.dir)
	t.Cleanup(func() { os.Remove("/etc/" + hostEtc) })
	up := strings.Repeat("../", 30)
	rel := strings.TrimPrefix(m.dir, "/")
	cases := map[string][][]ent{
		"a -> / then a/etc/x":                      {{symlink("a", "/"), file("a/etc/"+hostEtc, "x")}},
		"a -> / then dir a/<host dir>/x":           {{symlink("a", "/"), dir("a/" + rel + "/pwned")}},
		"a -> ../../.. then a/<host dir>/x":        {{symlink("a", up), file("a/"+rel+"/pwned", "x")}},
		"nested relative climb":                    {{dir("d"), symlink("d/e", "../../.."), file("d/e/"+rel+"/pwned", "x")}},
		"symlink replaced by dir, then file":       {{symlink("a", m.dir)}, {dir("a"), file("a/pwned", "x")}},
		"dir replaced by symlink, then file":       {{dir("a"), file("a/f", "x")}, {symlink("a", m.dir)}, {file("a/pwned", "x")}},
		"same layer: dir, symlink, file":           {{dir("a"), symlink("a", m.dir), file("a/pwned", "x")}},
		"hard link to an outward symlink, via it":  {{symlink("s", m.dir), hardlink("h", "s"), file("h/pwned", "x")}},
		"hard link to an outward symlink, over it": {{symlink("s", m.secret), hardlink("h", "s")}, {file("h", "overwritten")}},
		"hard link to ../":                         {{hardlink("h", "../")}},
		"hard link to ..":                          {{hardlink("h", "..")}},
		"hard link named ../x":                     {{file("f", "x"), hardlink("../pwned", "f")}},
		"whiteout through a -> /":                  {{symlink("a", "/")}, {file("a/"+rel+"/.wh.secret", "")}},
		"opaque through a -> /":                    {{symlink("a", "/")}, {file("a/"+rel+"/.wh..wh..opq", "")}},
		"whiteout of ..":                           {{dir("d")}, {file("d/.wh...", "")}},
		"whiteout of .. at the root":               {{file(".wh...", "")}},
		"whiteout of .":                            {{file(".wh..", "")}},
		"whiteout of the empty name":               {{file(".wh.", "")}},
		"opaque at the root":                       {{file("lower", "x")}, {file(".wh..wh..opq", ""), file("upper", "y")}},
		"duplicate: file, symlink out, file":       {{file("d", "1"), symlink("d", m.secret), file("d", "2")}},
		"duplicate dir entries racing a link":      {{dir("x"), symlink("x", m.dir), dir("x"), file("x/pwned", "")}},
	}
	for name, layers := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := leaseLayers(t, image.Limits{}, layers...)
			t.Logf("lease: %v", err)
			m.intact(t, err)
			if _, serr := os.Lstat("/etc/" + hostEtc); serr == nil {
				t.Fatalf("the layers wrote the host's /etc/%s", hostEtc)
			}
			if err != nil {
				return
			}
			st, _ := os.Stat(m.secret)
			filepath.Walk(filepath.Dir(l.RootFS), func(p string, fi os.FileInfo, err error) error {
				if err == nil && os.SameFile(st, fi) {
					t.Errorf("%s is the host's file", p)
				}
				return nil
			})
		})
	}
}

// TestAttackUnpackHardLinkHostNames: a hard link naming a host system
// file links only the tree's file of that name, or is refused.
func TestAttackUnpackHardLinkHostNames(t *testing.T) {
	for _, target := range []string{"/etc/shadow", "/etc/passwd", "etc/passwd", "/proc/self/exe", "/proc/1/root/etc/passwd"} {
		t.Run(target, func(t *testing.T) {
			l, err := leaseLayers(t, image.Limits{}, []ent{hardlink("x", target)})
			if err == nil {
				t.Fatalf("a hard link to %s, which the tree does not hold, was made", target)
			}
			_ = l
		})
	}
	host, herr := os.Stat("/etc/passwd")
	l, err := leaseLayers(t, image.Limits{}, []ent{dir("etc"), file("etc/passwd", "the image's"), hardlink("x", "/etc/passwd")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(l.RootFS, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if herr == nil && os.SameFile(st, host) {
		t.Fatal("the tree's x is the host's /etc/passwd")
	}
	if b, _ := os.ReadFile(filepath.Join(l.RootFS, "x")); string(b) != "the image's" {
		t.Fatalf("x holds %q, want the image's passwd", b)
	}
}

// TestAttackUnpackNames: names too long for the kernel, or so deep that
// one entry makes thousands of directories, are refused (not created
// beyond what a box could name).
func TestAttackUnpackNames(t *testing.T) {
	cases := map[string]string{
		"component of 300 bytes": strings.Repeat("n", 300) + "/f",
		"name of 8 KiB":          strings.Repeat("abcdefg/", 1024) + "f",
		"20000 directories deep": strings.Repeat("d/", 20000) + "f",
	}
	for name, n := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := leaseLayers(t, image.Limits{}, []ent{file(n, "x")}); err == nil {
				t.Fatalf("a %d-byte name with %d components was unpacked", len(n), strings.Count(n, "/")+1)
			}
		})
	}
}

// TestAttackUnpackModes: the unpacked tree is written by the harness
// only: no file or directory is writable by group or others whatever
// mode the image gives it (the cache is shared by every run on the
// machine), no set-ID bit survives, and no file capability (the
// security.capability xattr of a PAX record) is set.
func TestAttackUnpackModes(t *testing.T) {
	ww := dir("var/tmp")
	ww.mode = 0o1777
	wd := dir("usr/local/bin")
	wd.mode = 0o777
	wf := file("usr/local/bin/tool", "#!/bin/sh\n")
	wf.mode = 0o777
	sg := dir("srv")
	sg.mode = 0o2777
	l, err := leaseLayers(t, image.Limits{}, []ent{dir("var"), ww, dir("usr"), dir("usr/local"), wd, wf, sg, capFile("usr/bin/ping")})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.Walk(l.RootFS, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return err
		}
		if fi.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s is %v: writable by others than the harness", p, fi.Mode())
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s is %v: a set-ID bit survived", p, fi.Mode())
		}
		if n, err := syscall.Getxattr(p, "security.capability", make([]byte, 64)); err == nil && n > 0 {
			t.Errorf("%s carries a file capability", p)
		} else if err != nil && !errors.Is(err, syscall.ENODATA) && !errors.Is(err, syscall.ENOTSUP) {
			t.Errorf("%s: getxattr: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// capFile is an executable whose PAX records give it cap_net_raw+ep.
func capFile(name string) ent {
	e := file(name, "#!/bin/sh\n")
	e.mode = 0o755
	// vfs_cap_data v2: magic|effective, cap_net_raw (13) permitted.
	e.xattr = map[string]string{"security.capability": "\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}
	return e
}
