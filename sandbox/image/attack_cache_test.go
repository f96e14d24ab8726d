//go:build linux

package image_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/sandbox/image"
)

// cachedKeys lists the unpacked images (directories) a cache holds, and
// any unpack left behind.
func cachedKeys(t *testing.T, cache string) (keys, leftovers []string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(cache, "images"))
	for _, e := range entries {
		switch {
		case e.IsDir() && strings.HasPrefix(e.Name(), "sha256-"):
			keys = append(keys, e.Name())
		case e.IsDir():
			leftovers = append(leftovers, e.Name())
		}
	}
	return keys, leftovers
}

// TestAttackImageCacheConcurrentUnpack: runs leasing one image at once
// unpack it once and all get the whole tree.
func TestAttackImageCacheConcurrentUnpack(t *testing.T) {
	var ents []ent
	for i := range 200 {
		ents = append(ents, file("f/"+strings.Repeat("x", i%50+1)+string(rune('a'+i%26)), strings.Repeat("y", i)))
	}
	ents = append(ents, file("last", "complete"))
	p := layoutOf(t, imageOf(t, nil, layerOf(t, ents...)), "t")
	cache := t.TempDir()
	var wg sync.WaitGroup
	leases := make([]*sandbox.ImageLease, 6)
	errs := make([]error, 6)
	for i := range leases {
		wg.Go(func() { leases[i], errs[i] = image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
		defer leases[i].Release()
		if leases[i].RootFS != leases[0].RootFS {
			t.Fatalf("two trees for one image: %s %s", leases[i].RootFS, leases[0].RootFS)
		}
		if b, _ := os.ReadFile(filepath.Join(leases[i].RootFS, "last")); string(b) != "complete" {
			t.Fatalf("lease %d got a partial tree", i)
		}
	}
	if keys, left := cachedKeys(t, cache); len(keys) != 1 || len(left) != 0 {
		t.Fatalf("cache holds %v and leftovers %v", keys, left)
	}
}

// TestAttackImageCacheHalfUnpack: an unpack that fails midway (a later
// layer over the limit, or its bytes not the digest's) leaves nothing a
// later run takes as the image; the next lease unpacks it whole.
func TestAttackImageCacheHalfUnpack(t *testing.T) {
	p := layoutOf(t, imageOf(t, nil, layerOf(t, file("first", "1")), layerOf(t, file("big", strings.Repeat("z", 64<<10)))), "t")
	cache := t.TempDir()
	if _, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{Bytes: 32 << 10}); err == nil {
		t.Fatal("a layer over the limit was unpacked")
	}
	if keys, left := cachedKeys(t, cache); len(keys) != 0 || len(left) != 0 {
		t.Fatalf("a failed unpack left %v %v", keys, left)
	}
	l, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if b, _ := os.ReadFile(filepath.Join(l.RootFS, "big")); len(b) != 64<<10 {
		t.Fatalf("the second lease got %d bytes of big", len(b))
	}
}

// TestAttackImageRegistryLies: a registry that serves, for a pinned
// digest, a manifest then other layer bytes than the manifest names (a
// tag moved, or a blob swapped, between the check and the unpack): the
// image is refused and nothing is cached.
func TestAttackImageRegistryLies(t *testing.T) {
	good := imageOf(t, nil, layerOf(t, file("tool", "the real tool")))
	evilTar := tarOf(t, file("tool", "an evil tool"))
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(evilTar)
	w.Close()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var blobs atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") && !strings.Contains(r.URL.Path, "/uploads/") {
			if l, _ := good.Layers(); len(l) == 1 {
				d, _ := l[0].Digest()
				if strings.HasSuffix(r.URL.Path, d.String()) {
					blobs.Add(1)
					// Other bytes for the layer's digest, chunked (no
					// Content-Length to give the swap away early).
					rw.WriteHeader(http.StatusOK)
					rw.(http.Flusher).Flush()
					rw.Write(gz.Bytes())
					return
				}
			}
		}
		reg.ServeHTTP(rw, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, _ := name.ParseReference(host + "/evil/img:1")
	if err := remote.Write(ref, good); err != nil {
		t.Fatal(err)
	}
	d, _ := good.Digest()
	cache := t.TempDir()
	_, err := image.Lease(t.Context(), cache, "docker://"+host+"/evil/img@"+d.String(), image.Limits{})
	if err == nil {
		t.Fatal("a layer whose bytes are not its digest's was taken")
	}
	t.Logf("refused: %v (swapped blob served %d times)", err, blobs.Load())
	if keys, left := cachedKeys(t, cache); len(keys) != 0 || len(left) != 0 {
		t.Fatalf("the refused image is in the cache: %v %v", keys, left)
	}
}

// TestAttackImageGzipBomb: a small layer that inflates far past the
// limit (zeros after the tar's end, which the digest covers) stops at
// the limit instead of being read to its end; with the default limit
// too (the zeros after the tar's end are not a layer's).
func TestAttackImageGzipBomb(t *testing.T) {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(tarOf(t, file("a", "b")))
	zeros := make([]byte, 1<<20)
	for range 256 { // 256 MiB after the tar's end
		w.Write(zeros)
	}
	w.Close()
	t.Logf("a %d-byte layer inflating to 256 MiB", gz.Len())
	bomb := gz.Bytes()
	l := layerFromGzip(t, bomb)
	p := layoutOf(t, imageOf(t, nil, l), "t")
	_, err := image.Lease(t.Context(), t.TempDir(), "oci:"+p+":t", image.Limits{Bytes: 1 << 20, Entries: 64})
	if err == nil || !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "after the tar's end") {
		t.Fatalf("a gzip bomb under a 1 MiB limit: %v", err)
	}
	if _, err = image.Lease(t.Context(), t.TempDir(), "oci:"+p+":t", image.Limits{}); err == nil {
		t.Fatal("256 MiB of zeros after a layer's tar was taken")
	}
	t.Logf("default limits: %v", err)
}

// layerFromGzip is a layer whose stored bytes are gz, as given.
func layerFromGzip(t *testing.T, gz []byte) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestAttackImageCacheKilledUnpack: what an unpack killed midway leaves
// (its temporary tree) is never leased, and eviction frees it once no
// unpack of that image runs; one still running is left alone.
func TestAttackImageCacheKilledUnpack(t *testing.T) {
	p := layoutOf(t, imageOf(t, nil, layerOf(t, file("whole", "yes"))), "t")
	cache := t.TempDir()
	l, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	root := filepath.Join(cache, "images")
	dead, live := "sha256-"+strings.Repeat("a", 64), "sha256-"+strings.Repeat("b", 64)
	for _, k := range []string{dead, live} {
		half := filepath.Join(root, ".unpack-"+k+"-123", "rootfs", "usr")
		if err := os.MkdirAll(half, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(half, "half"), make([]byte, 4096), 0o644)
	}
	lock, err := os.OpenFile(filepath.Join(root, live+".build"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.EvictImages(cache, 1<<40); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".unpack-"+dead+"-123")); err == nil {
		t.Error("a dead unpack's half tree was kept")
	}
	if _, err := os.Stat(filepath.Join(root, ".unpack-"+live+"-123")); err != nil {
		t.Error("an unpack still running lost its tree")
	}
	if b, _ := os.ReadFile(filepath.Join(l.RootFS, "whole")); string(b) != "yes" {
		t.Error("the leased image was touched")
	}
}

// TestAttackImageLayoutLinkedBlobs: an OCI layout (a directory someone
// else may have written) whose layer blob is a FIFO or a link to
// /dev/zero or a host file, or whose index.json is a FIFO, is refused
// without hanging.
func TestAttackImageLayoutLinkedBlobs(t *testing.T) {
	m := newHostMarker(t)
	for name, plant := range map[string]func(blob string) error{
		"fifo":      func(b string) error { return syscall.Mkfifo(b, 0o644) },
		"/dev/zero": func(b string) error { return os.Symlink("/dev/zero", b) },
		"host file": func(b string) error { return os.Symlink(m.secret, b) },
		"index.json a fifo": func(b string) error {
			index := filepath.Join(b, "../../../index.json")
			os.Remove(index)
			return syscall.Mkfifo(index, 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			l := layerOf(t, file("tool", "x"))
			p := layoutOf(t, imageOf(t, nil, l), "t")
			d, _ := l.Digest()
			blob := filepath.Join(p, "blobs", "sha256", d.Hex)
			if !strings.HasPrefix(name, "index") {
				os.Remove(blob)
			}
			if err := plant(blob); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := image.Lease(t.Context(), t.TempDir(), "oci:"+p+":t", image.Limits{})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a layout blob that is no regular file was taken")
				}
				t.Logf("refused: %v", err)
			case <-time.After(time.Minute): // a hang guard, not a timing check
				for _, f := range []string{blob, filepath.Join(p, "index.json")} {
					if f, err := os.OpenFile(f, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				}
				t.Fatal("the lease hung on the layout's blob")
			}
		})
	}
}

// TestAttackImageConfigLies: a configuration whose diff_ids do not name
// the layers' contents, or list another number of layers than the
// manifest, is refused and nothing is cached (the manifest, config and
// layer blobs all match their own digests: only the chain is a lie).
func TestAttackImageConfigLies(t *testing.T) {
	img := imageOf(t, nil, layerOf(t, file("tool", "x")))
	cases := map[string]func(cf *v1.ConfigFile){
		"wrong diff_id":  func(cf *v1.ConfigFile) { cf.RootFS.DiffIDs[0].Hex = strings.Repeat("0", 64) },
		"extra diff_id":  func(cf *v1.ConfigFile) { cf.RootFS.DiffIDs = append(cf.RootFS.DiffIDs, cf.RootFS.DiffIDs[0]) },
		"no diff_ids":    func(cf *v1.ConfigFile) { cf.RootFS.DiffIDs = nil },
		"other platform": func(cf *v1.ConfigFile) { cf.Architecture = "s390x-evil" },
	}
	for name, lie := range cases {
		t.Run(name, func(t *testing.T) {
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			cf = cf.DeepCopy()
			lie(cf)
			bad, err := mutate.ConfigFile(img, cf)
			if err != nil {
				t.Fatal(err)
			}
			p := layoutOf(t, bad, "t")
			cache := t.TempDir()
			if _, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{}); err == nil {
				t.Fatal("an image whose configuration lies was taken")
			} else {
				t.Logf("refused: %v", err)
			}
			if keys, left := cachedKeys(t, cache); len(keys) != 0 || len(left) != 0 {
				t.Fatalf("the refused image is in the cache: %v %v", keys, left)
			}
		})
	}
}

// TestAttackImageCacheEvictionRace: eviction (to nothing) running over
// and over while runs lease, read and release one image never removes
// or empties a tree a run holds.
func TestAttackImageCacheEvictionRace(t *testing.T) {
	p := layoutOf(t, imageOf(t, nil, layerOf(t, dir("usr"), file("usr/whole", "yes"))), "t")
	cache := t.TempDir()
	stop := make(chan struct{})
	var evictions atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			gone, _ := sandbox.EvictImages(cache, 0)
			evictions.Add(int32(len(gone)))
		}
	})
	for range 40 {
		l, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(l.RootFS, "usr/whole")); string(b) != "yes" {
			t.Errorf("a leased tree lost its file: %q %v", b, err)
		}
		l.Release()
	}
	close(stop)
	wg.Wait()
	t.Logf("%d evictions between the leases", evictions.Load())
}

// TestAttackImageTagMoves: a layout's tag moved to another image
// between two runs gives the second run the new image's own tree (the
// cache is keyed by the manifest digest, never by the tag), and the
// first run's tree is untouched.
func TestAttackImageTagMoves(t *testing.T) {
	p := layoutOf(t, imageOf(t, nil, layerOf(t, file("tool", "first"))), "t")
	cache := t.TempDir()
	a, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	q := layoutOf(t, imageOf(t, nil, layerOf(t, file("tool", "moved"))), "t")
	for _, f := range []string{"index.json", "blobs"} {
		os.RemoveAll(filepath.Join(p, f))
		if err := os.Rename(filepath.Join(q, f), filepath.Join(p, f)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := image.Lease(t.Context(), cache, "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if a.Key == b.Key || a.RootFS == b.RootFS {
		t.Fatalf("the moved tag got the first image's tree %s", a.RootFS)
	}
	for l, want := range map[*sandbox.ImageLease]string{a: "first", b: "moved"} {
		if got, _ := os.ReadFile(filepath.Join(l.RootFS, "tool")); string(got) != want {
			t.Errorf("%s holds %q, want %q", l.RootFS, got, want)
		}
	}
}
