//go:build linux

package image_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sandgate/sandgate/sandbox/image"
)

// TestImageDigestMismatchRefused swaps a layer blob of an OCI layout
// for other bytes, and pins a layout image to a digest it does not
// have: both are refused and nothing is left in the cache.
func TestImageDigestMismatchRefused(t *testing.T) {
	l := layerOf(t, file("tool", "the real tool"))
	p := layoutOf(t, imageOf(t, nil, l), "t")
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	var evil bytes.Buffer
	gz := gzip.NewWriter(&evil)
	gz.Write(tarOf(t, file("tool", "an evil tool")))
	gz.Close()
	if err := os.WriteFile(filepath.Join(p, "blobs", "sha256", d.Hex), evil.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	_, err = image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a swapped layer: %v, want it refused", err)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "images", "sha256-*"))
	for _, e := range entries {
		if st, err := os.Stat(e); err == nil && st.IsDir() {
			t.Fatalf("the refused image is in the cache: %s", e)
		}
	}
	q := layoutOf(t, imageOf(t, nil, layerOf(t, file("x", "y"))), "t")
	wrong := "sha256:" + strings.Repeat("0", 64)
	if _, err := image.Lease(t.Context(), cache, "oci:"+q+"@"+wrong, image.Limits{}); err == nil {
		t.Fatal("a layout image pinned to a digest it does not have was taken")
	}
}

// TestImageFromRegistry pulls from a registry served on loopback: by
// digest it works, a wrong digest fails, a tag alone is refused.
func TestImageFromRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img := imageOf(t, []string{"PATH=/opt/tool/bin"}, layerOf(t, dir("opt"), file("opt/tool/bin/tool", "x")))
	tag, err := name.ParseReference(host + "/tools/go:1.26")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	l, err := image.Lease(t.Context(), cache, "docker://"+host+"/tools/go@"+d.String(), image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := os.Stat(filepath.Join(l.RootFS, "opt/tool/bin/tool")); err != nil || strings.Join(l.Env, " ") != "PATH=/opt/tool/bin" {
		t.Fatalf("pulled tree or env wrong: %v %v", err, l.Env)
	}
	if _, err := image.Lease(t.Context(), cache, "docker://"+host+"/tools/go:1.26", image.Limits{}); err == nil || !strings.Contains(err.Error(), "not pinned") {
		t.Fatalf("a tag alone: %v, want it refused as not pinned", err)
	}
	other := "sha256:" + strings.Repeat("1", 64)
	if _, err := image.Lease(t.Context(), cache, "docker://"+host+"/tools/go@"+other, image.Limits{}); err == nil {
		t.Fatal("a digest the registry does not have was taken")
	}
}

// TestImageFromDockerArchive reads a docker save archive.
func TestImageFromDockerArchive(t *testing.T) {
	img := imageOf(t, []string{"PATH=/bin"}, layerOf(t, file("hello", "from the archive")))
	p := filepath.Join(t.TempDir(), "img.tar")
	tag, _ := name.NewTag("example.com/img:1")
	if err := tarball.WriteToFile(p, tag, img); err != nil {
		t.Fatal(err)
	}
	l, err := image.Lease(t.Context(), t.TempDir(), "docker-archive:"+p, image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if b, err := os.ReadFile(filepath.Join(l.RootFS, "hello")); err != nil || string(b) != "from the archive" {
		t.Fatalf("%q %v", b, err)
	}
}
