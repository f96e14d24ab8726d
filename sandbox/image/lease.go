package image

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// Lease leases the image ref names (a sandbox.image value) in the
// sandbox's cache, fetching, verifying and unpacking it first when the
// cache does not hold it. Any failure is an error naming the image: the
// caller must not start a box without it (never on the host's root).
func Lease(ctx context.Context, cacheDir, ref string, lim Limits) (*sandbox.ImageLease, error) {
	r, err := Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("sandbox.image: %w", err)
	}
	l, err := lease(ctx, cacheDir, r, lim.withDefaults())
	if err != nil {
		return nil, fmt.Errorf("sandbox.image %s: %w", r, err)
	}
	return l, nil
}

func lease(ctx context.Context, cacheDir string, r Ref, lim Limits) (*sandbox.ImageLease, error) {
	img, err := open(ctx, r)
	if err != nil {
		return nil, err
	}
	c, err := verify(img, r)
	if err != nil {
		return nil, err
	}
	return sandbox.LeaseImage(cacheDir, c.digest, func(rootfs string) ([]string, error) {
		return c.env, unpackAll(c, rootfs, lim)
	})
}

// unpackAll unpacks every layer into rootfs, an empty directory.
func unpackAll(c *checked, rootfs string, lim Limits) error {
	r, err := os.OpenRoot(rootfs)
	if err != nil {
		return err
	}
	defer r.Close()
	u := &unpacker{r: r, lim: lim}
	// The tar headers count against the budget too (512 bytes each,
	// some more for long names).
	budget := lim.Bytes + int64(lim.Entries)*2048
	if err := c.eachLayer(budget, func(_ int, tr *tar.Reader) error { return u.apply(tr) }); err != nil {
		return err
	}
	// What was not created (devices, FIFOs) or was changed (set-ID bits),
	// beside the tree, for whoever asks what the box got.
	note := strings.Join(u.Skipped, "\n")
	return os.WriteFile(filepath.Join(filepath.Dir(rootfs), "skipped.txt"), []byte(note), 0o644)
}
