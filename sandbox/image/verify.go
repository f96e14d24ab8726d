package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	goruntime "runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// maxTrailing bounds what a layer may hold after its tar's end (tar pads
// to 10 KiB records).
const maxTrailing = 1 << 20

// maxLayers bounds the layers an image may have (Docker's own limit is 127).
const maxLayers = 128

// checked is an image whose manifest and configuration have been
// verified: what unpacking needs.
type checked struct {
	digest string // the manifest's, "sha256:…"
	layers []v1.Descriptor
	diffs  []v1.Hash
	env    []string
	img    v1.Image
	// compressed: the layers' stored bytes are what the manifest's
	// digests name (not so for a docker save archive, whose manifest
	// go-containerregistry computes by compressing the layers itself).
	compressed bool
}

// verify checks the chain from the manifest to the layers' digests.
func verify(img v1.Image, r Ref) (*checked, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	c := &checked{digest: sha(raw), img: img, compressed: r.Transport != TransportDockerArchive}
	want := r.Digest
	if p, ok := img.(pinned); ok {
		want = p.digest
	}
	if want != "" && c.digest != want {
		return nil, fmt.Errorf("the manifest's digest is %s, not the %s it is named by", c.digest, want)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	cfgRaw, err := img.RawConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	if got := sha(cfgRaw); got != m.Config.Digest.String() {
		return nil, fmt.Errorf("the configuration's digest is %s, not the manifest's %s", got, m.Config.Digest)
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(cfgRaw))
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	if cfg.OS != "" && cfg.OS != "linux" || cfg.Architecture != "" && cfg.Architecture != goruntime.GOARCH {
		return nil, fmt.Errorf("the image is for %s/%s; boxes here run linux/%s", cfg.OS, cfg.Architecture, goruntime.GOARCH)
	}
	if len(m.Layers) != len(cfg.RootFS.DiffIDs) {
		return nil, fmt.Errorf("the manifest lists %d layers and the configuration %d", len(m.Layers), len(cfg.RootFS.DiffIDs))
	}
	if len(m.Layers) > maxLayers {
		return nil, fmt.Errorf("%d layers (at most %d)", len(m.Layers), maxLayers)
	}
	c.layers, c.diffs, c.env = m.Layers, cfg.RootFS.DiffIDs, cfg.Config.Env
	return c, nil
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// eachLayer streams every layer's tar, bottom first, to fn, checking its
// digests as it goes; a layer whose bytes do not match fails (after fn
// has read it: the caller throws the tree away). budget bounds the
// uncompressed bytes read in all, so a compression bomb stops there.
func (c *checked) eachLayer(budget int64, fn func(i int, tr *tar.Reader) error) error {
	left := &budgetReader{n: budget}
	for i, d := range c.layers {
		if d.Digest.Algorithm != "sha256" || c.diffs[i].Algorithm != "sha256" {
			return fmt.Errorf("layer %d: digest %s is not sha256", i, d.Digest)
		}
		if err := c.layer(i, d, left, fn); err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, d.Digest, err)
		}
	}
	return nil
}

func (c *checked) layer(i int, d v1.Descriptor, left *budgetReader, fn func(int, *tar.Reader) error) error {
	l, err := c.img.LayerByDigest(d.Digest)
	if err != nil {
		return err
	}
	var rc io.ReadCloser
	if c.compressed {
		rc, err = l.Compressed()
	} else {
		rc, err = l.Uncompressed()
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	stored := sha256.New()
	br := bufio.NewReader(io.TeeReader(rc, stored))
	var plain io.Reader = br
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		plain = gz
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return errors.New("zstd-compressed layers are not supported (gzip or none)")
	}
	diff := sha256.New()
	left.r = io.TeeReader(plain, diff)
	if err := fn(i, tar.NewReader(left)); err != nil {
		return err
	}
	// The digests cover every byte, also what follows the tar's end; a
	// real layer holds at most the tar's padding there, a bomb (or a
	// layout blob linked to /dev/zero) gigabytes that would be inflated
	// and hashed up to the whole budget, on every run's retry.
	n, err := io.Copy(io.Discard, io.LimitReader(left, maxTrailing+1))
	if err != nil {
		return err
	}
	if n > maxTrailing {
		return fmt.Errorf("more than %d bytes after the tar's end", maxTrailing)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	if c.compressed {
		if err := match(stored, d.Digest); err != nil {
			return err
		}
	}
	return match(diff, c.diffs[i])
}

func match(h hash.Hash, want v1.Hash) error {
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != want.String() {
		return fmt.Errorf("its bytes hash to %s, not %s: refused", got, want)
	}
	return nil
}

// budgetReader fails once more than n bytes were read through it.
type budgetReader struct {
	r io.Reader
	n int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errTooBig
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

var errTooBig = errors.New("the image is larger than the unpack limit")
