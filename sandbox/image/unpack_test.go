//go:build linux

package image_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox/image"
)

// TestImageUnpackLayers: later layers win, whiteouts and opaque
// directories remove what the layers below made, hard links link files
// already unpacked, duplicate entries keep the last.
func TestImageUnpackLayers(t *testing.T) {
	l, err := leaseLayers(t, image.Limits{},
		[]ent{dir("a"), file("a/x", "1"), file("a/y", "1"), dir("b"), file("b/z", "1"), dir("c"), file("c/keep", "1"),
			file("dup", "first"), file("dup", "second"), dir("d"), file("d/in", "1"), file("target", "t"),
			hardlink("linked", "target"), symlink("rel", "c/keep")},
		[]ent{file("a/new", "2"), file("a/.wh..wh..opq", ""), file(".wh.b", ""), file("d", "now a file"),
			file("target", "replaced"), file("c/.wh.nothing", "")},
	)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(l.RootFS, p))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	names := func(p string) string {
		es, _ := os.ReadDir(filepath.Join(l.RootFS, p))
		var n []string
		for _, e := range es {
			n = append(n, e.Name())
		}
		sort.Strings(n)
		return strings.Join(n, " ")
	}
	checks := map[string][2]string{
		"opaque a":            {names("a"), "new"},
		"whiteout b":          {names(""), "a c d dup linked rel target"},
		"c kept":              {read("c/keep"), "1"},
		"duplicate":           {read("dup"), "second"},
		"dir replaced":        {read("d"), "now a file"},
		"replaced target":     {read("target"), "replaced"},
		"hard link keeps old": {read("linked"), "t"},
		"symlink":             {read("rel"), "1"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s: got %q, want %q", name, c[0], c[1])
		}
	}
	if got, err := os.Readlink(filepath.Join(l.RootFS, "rel")); err != nil || got != "c/keep" {
		t.Errorf("rel -> %q %v", got, err)
	}
}

// TestImageUnpackedOnce: a second lease of the same image reuses the
// tree; an unleased image is evicted, a leased one stays.
func TestImageUnpackedOnce(t *testing.T) {
	p := layoutOf(t, imageOf(t, []string{"PATH=/opt/bin:/usr/bin", "LANG=C"}, layerOf(t, file("hello", "hi"))), "v1")
	cache := t.TempDir()
	a, err := image.Lease(t.Context(), cache, "oci:"+p+":v1", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.RootFS, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := image.Lease(t.Context(), cache, "oci:"+p, image.Limits{}) // the only image: no tag needed
	if err != nil {
		t.Fatal(err)
	}
	if b.RootFS != a.RootFS || strings.Join(b.Env, " ") != "PATH=/opt/bin:/usr/bin LANG=C" {
		t.Fatalf("second lease: %s %v, want %s with the image's env", b.RootFS, b.Env, a.RootFS)
	}
	if _, err := os.Stat(filepath.Join(b.RootFS, "marker")); err != nil {
		t.Fatal("the image was unpacked again")
	}
	if gone, _ := sandboxEvict(cache); len(gone) != 0 {
		t.Fatalf("evicted a leased image: %v", gone)
	}
	a.Release()
	b.Release()
	if gone, _ := sandboxEvict(cache); len(gone) != 1 {
		t.Fatalf("evicted %v, want the unleased image", gone)
	}
	if _, err := os.Stat(a.RootFS); err == nil {
		t.Fatal("the evicted image is still there")
	}
}
