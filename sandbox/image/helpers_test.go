//go:build linux

package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/sandbox/image"
)

// TestMain lets the test binary serve as the box's init (sandbox.Main).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// ent is one tar entry of a layer written by a test.
type ent struct {
	name, body, link string
	typ              byte
	mode             int64
	xattr            map[string]string // as SCHILY.xattr PAX records
}

func file(name, body string) ent { return ent{name: name, body: body, typ: tar.TypeReg, mode: 0o644} }
func dir(name string) ent        { return ent{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) ent {
	return ent{name: name, link: target, typ: tar.TypeSymlink, mode: 0o777}
}
func hardlink(name, target string) ent {
	return ent{name: name, link: target, typ: tar.TypeLink, mode: 0o644}
}

// tarOf writes entries as a tar, in order, exactly as given.
func tarOf(t *testing.T, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.body)),
			ModTime: time.Unix(1700000000, 0), Format: tar.FormatPAX}
		if e.typ == tar.TypeChar || e.typ == tar.TypeBlock {
			h.Devmajor, h.Devminor = 8, 0
		}
		if len(e.xattr) > 0 {
			h.PAXRecords = map[string]string{}
			for k, v := range e.xattr {
				h.PAXRecords["SCHILY.xattr."+k] = v
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func layerOf(t *testing.T, ents ...ent) v1.Layer {
	t.Helper()
	b := tarOf(t, ents...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf stacks layers (bottom first) into a linux image of this
// machine's architecture with env as its configuration's environment.
func imageOf(t *testing.T, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config.Env = "linux", goruntime.GOARCH, env
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// layoutOf writes img as the only image of a new OCI layout, tagged tag.
func layoutOf(t *testing.T, img v1.Image, tag string) string {
	t.Helper()
	p := t.TempDir()
	l, err := layout.Write(p, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		t.Fatal(err)
	}
	return p
}

// leaseLayers unpacks an image of the given layers through an OCI layout
// into a new cache.
func leaseLayers(t *testing.T, lim image.Limits, layers ...[]ent) (*sandbox.ImageLease, error) {
	t.Helper()
	var ls []v1.Layer
	for _, l := range layers {
		ls = append(ls, layerOf(t, l...))
	}
	p := layoutOf(t, imageOf(t, nil, ls...), "t")
	l, err := image.Lease(context.Background(), t.TempDir(), "oci:"+p+":t", lim)
	if err == nil {
		t.Cleanup(func() { l.Release() })
	}
	return l, err
}

func sandboxEvict(cache string) ([]sandbox.ImageInfo, error) { return sandbox.EvictImages(cache, 0) }
