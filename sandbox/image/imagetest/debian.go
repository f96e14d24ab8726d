package imagetest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The machine that runs the tests has no container engine and reaches no
// outside registry, but it has Debian's packages: an image of a language's
// toolchain is assembled from the files the host's dpkg installed for a
// package and every package it depends on (installed ones; an unmet
// alternative is left out). The tar is written in a fixed order with
// fixed times and owners, so the same host packages make the same digest
// and the sandbox's image cache unpacks them once for every test.

// DebianPackages is the base every toolchain image gets: a shell and the
// coreutils the harness itself runs in a box (rm, stat, cat).
var DebianPackages = []string{"dash", "coreutils"}

// DebianLayout writes an OCI layout (tag "t") of a linux image holding
// the host's installed Debian packages pkgs, DebianPackages and their
// installed dependencies, with PATH=/usr/local/bin:/usr/bin:/bin. It fails
// the test when a package named is not installed (.ci/run installs them).
func DebianLayout(t *testing.T, pkgs ...string) string {
	t.Helper()
	deps := installedDeps(t)
	set := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if set[p] {
			return
		}
		d, ok := deps[p]
		if !ok {
			return
		}
		set[p] = true
		for _, q := range d {
			walk(q)
		}
	}
	for _, p := range append(append([]string{}, DebianPackages...), pkgs...) {
		if _, ok := deps[p]; !ok {
			t.Fatalf("Debian package %s is not installed on this machine (.ci/run installs it: apt-get install %s)", p, p)
		}
		walk(p)
	}
	names := make([]string, 0, len(set))
	for p := range set {
		names = append(names, p)
	}
	sort.Strings(names)
	out, err := exec.Command("dpkg", append([]string{"-L"}, names...)...).Output()
	if err != nil {
		t.Fatalf("dpkg -L: %v", err)
	}
	layer := debianTar(t, strings.Split(string(out), "\n"))
	return writeImage(t, layer, []string{"PATH=/usr/local/bin:/usr/bin:/bin"})
}

// installedDeps maps every installed package to the installed packages
// it depends on (the first installed alternative of each dependency).
func installedDeps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Provides}\t${Depends}, ${Pre-Depends}\n").Output()
	if err != nil {
		t.Fatalf("dpkg-query: %v", err)
	}
	raw := map[string]string{}
	provided := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 4)
		if len(f) != 4 || !strings.HasPrefix(f[1], "ii") {
			continue
		}
		raw[f[0]] = f[3]
		for _, p := range strings.Split(f[2], ",") {
			if p = depName(p); p != "" {
				provided[p] = f[0]
			}
		}
	}
	deps := map[string][]string{}
	for p, d := range raw {
		deps[p] = nil
		for _, clause := range strings.Split(d, ",") {
			for _, alt := range strings.Split(clause, "|") {
				name := depName(alt)
				if _, ok := raw[name]; ok {
					deps[p] = append(deps[p], name)
					break
				}
				if by, ok := provided[name]; ok {
					deps[p] = append(deps[p], by)
					break
				}
			}
		}
	}
	return deps
}

// depName is the package of one dependency ("libc6 (>= 2.34)", "python3:any").
func depName(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	s, _, _ = strings.Cut(s, "(")
	s, _, _ = strings.Cut(s, ":")
	return strings.TrimSpace(s)
}

// debianTar writes the host's files at paths (as dpkg lists them) into
// one uncompressed layer file (fileLayer) and returns it. A path under a
// top-level symlink of the host (/bin -> usr/bin on a merged-/usr system)
// is stored where it really is, beside that symlink, so the image has one
// copy of each file. The layer streams to disk: nodejs's is about 200 MB,
// and held in a bytes.Buffer (grown by doubling, then compressed twice by
// the layout's writer) it took the race-built cmd/sandgate test binary to
// 5.0-5.7 GB RSS, over CI's 4 GiB a binary.
func debianTar(t *testing.T, paths []string) *fileLayer {
	t.Helper()
	entries := map[string]bool{}
	links := map[string]string{}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || p == "/." {
			continue
		}
		rel := strings.TrimPrefix(path.Clean(p), "/")
		top, rest, _ := strings.Cut(rel, "/")
		if target, err := os.Readlink("/" + top); err == nil && !strings.Contains(target, "/..") {
			links[top] = target
			if rest == "" {
				continue
			}
			rel = path.Join(strings.TrimPrefix(target, "/"), rest)
		}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			entries[d+"/"] = true
		}
		entries[rel] = true
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	name := filepath.Join(t.TempDir(), "layer.tar")
	f, err := os.Create(name)
	must(t, err)
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	sum := sha256.New()
	n := &countWriter{}
	tw := tar.NewWriter(io.MultiWriter(bw, sum, n))
	tops := make([]string, 0, len(links))
	for top := range links {
		tops = append(tops, top)
	}
	sort.Strings(tops)
	for _, top := range tops {
		must(t, tw.WriteHeader(&tar.Header{Name: top, Typeflag: tar.TypeSymlink, Linkname: links[top], Mode: 0o777}))
	}
	for _, n := range names {
		addHostFile(t, tw, n)
	}
	must(t, tw.Close())
	must(t, bw.Flush())
	must(t, f.Close())
	return &fileLayer{path: name, size: n.n, hash: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum.Sum(nil))}}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// fileLayer is an uncompressed tar layer in a file: its blob is the tar
// itself (the digest is the diff ID), so writing the layout compresses
// nothing and reading it inflates nothing; the sandbox unpacks gzip or
// none. gzip at its fastest, and inflating it all again for the diff ID,
// in the race-built test binaries (the language tests of cmd/sandgate)
// cost about 15 CPU-seconds for Python's image and 45 for Node's, whose
// layer is 200 MB; as written here the image is a plain write and a
// SHA-256 on the way.
type fileLayer struct {
	path string
	size int64
	hash v1.Hash
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.hash, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.hash, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return os.Open(l.path) }
func (l *fileLayer) Size() (int64, error)                 { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) {
	return types.DockerUncompressedLayer, nil
}

// addHostFile writes the host's /name into tw with fixed times and
// owners: a directory, a symlink as it is, or a regular file's bytes.
func addHostFile(t *testing.T, tw *tar.Writer, name string) {
	t.Helper()
	host := "/" + strings.TrimSuffix(name, "/")
	info, err := os.Lstat(host)
	if err != nil {
		return // dpkg lists a file a local admin removed (docs, locales)
	}
	h := &tar.Header{Name: name, Mode: int64(info.Mode().Perm())}
	switch {
	case info.IsDir():
		h.Typeflag, h.Name = tar.TypeDir, strings.TrimSuffix(name, "/")+"/"
	case info.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(host)
		must(t, err)
		h.Typeflag, h.Linkname = tar.TypeSymlink, target
	case info.Mode().IsRegular():
		h.Typeflag, h.Size = tar.TypeReg, info.Size()
	default:
		return
	}
	must(t, tw.WriteHeader(h))
	if h.Typeflag != tar.TypeReg {
		return
	}
	f, err := os.Open(host)
	must(t, err)
	defer f.Close()
	_, err = io.CopyN(tw, f, h.Size)
	must(t, err)
}

// writeLayout writes an OCI layout of one linux image whose only layer is
// the tar layer open gives, with env, tagged "t". A layer open gives
// uncompressed is compressed fast (the image lives for the test, its
// digest fixed by its bytes); a gzip-compressed one is kept as it is.
func writeLayout(t *testing.T, open tarball.Opener, env []string) string {
	t.Helper()
	l, err := tarball.LayerFromOpener(open, tarball.WithCompressionLevel(gzip.BestSpeed))
	must(t, err)
	return writeImage(t, l, env)
}

// writeImage writes an OCI layout of one linux image whose only layer is
// l, with env, tagged "t".
func writeImage(t *testing.T, l v1.Layer, env []string) string {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, l)
	must(t, err)
	cf, err := img.ConfigFile()
	must(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config.Env = "linux", goruntime.GOARCH, env
	img, err = mutate.ConfigFile(img, cf)
	must(t, err)
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	must(t, err)
	must(t, p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "t"})))
	return filepath.Clean(dir)
}
