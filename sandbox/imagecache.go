package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The image cache (cacheDir/images) holds box roots unpacked from OCI
// images: images/<key>/rootfs, the tree, and images/<key>/config.json,
// what the box takes from the image's configuration. The key is the
// image's manifest digest (sha256-<hex>). An image is unpacked once, in
// a temporary directory renamed into place, and shared read-only by every
// box; it is leased and evicted like a snapshot (<key>.lock: shared
// flocks, its mtime the LRU clock; <key>.build: one unpacker at a time).
// This package only keeps the cache: fetching, verifying and unpacking
// an image is sandbox/image's, so the sandbox needs no OCI library.

var imageKey = regexp.MustCompile(`^sha256-[0-9a-f]{64}$`)

// ImageLease keeps an unpacked image from eviction while a run uses it.
type ImageLease struct {
	// RootFS is the image's unpacked tree: Policy.RootFS.
	RootFS string
	// Env is the environment the image's configuration sets (Policy.RootEnv).
	Env []string
	// Key names the image in the cache (sha256-<manifest hex>).
	Key string
	l   *SnapshotLease
}

// Release ends the lease.
func (l *ImageLease) Release() error {
	if l == nil {
		return nil
	}
	return l.l.Release()
}

// imageConfig is images/<key>/config.json.
type imageConfig struct {
	Env []string `json:"env"`
}

// LeaseImage leases the image whose manifest digest is digest
// ("sha256:<hex>"), unpacking it first when the cache does not hold it:
// unpack gets an empty directory and must fill it with the image's tree;
// it returns the image configuration's environment. The tree is renamed
// into the cache only when unpack succeeds, so a half-unpacked image is
// never used.
func LeaseImage(cacheDir, digest string, unpack func(rootfs string) (env []string, err error)) (*ImageLease, error) {
	key := "sha256-" + digestHex(digest)
	if !imageKey.MatchString(key) {
		return nil, fmt.Errorf("sandbox: image digest %q is not sha256:<64 hex digits>", digest)
	}
	root := filepath.Join(cacheDir, "images")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := lease(root, key)
	if err != nil {
		return nil, err
	}
	_, err = buildOnce(root, key, func(string) error { return unpackImage(root, key, unpack) })
	var cfg imageConfig
	if err == nil {
		var b []byte
		if b, err = os.ReadFile(filepath.Join(root, key, "config.json")); err == nil {
			err = json.Unmarshal(b, &cfg)
		}
	}
	if err != nil {
		l.Release()
		return nil, err
	}
	_, _ = EvictImages(cacheDir, CacheMax())
	return &ImageLease{RootFS: filepath.Join(root, key, "rootfs"), Env: cfg.Env, Key: key, l: l}, nil
}

func digestHex(d string) string {
	if len(d) > len("sha256:") && d[:len("sha256:")] == "sha256:" {
		return d[len("sha256:"):]
	}
	return ""
}

// unpackImage fills root/<key> through a temporary directory.
func unpackImage(root, key string, unpack func(string) ([]string, error)) error {
	// The key in the name lets sweepUnpacks tell whose it is.
	tmp, err := os.MkdirTemp(root, ".unpack-"+key+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rootfs := filepath.Join(tmp, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		return err
	}
	env, err := unpack(rootfs)
	if err != nil {
		return err
	}
	b, err := json.Marshal(imageConfig{Env: env})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "config.json"), b, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Its size, kept beside it as a snapshot's is (describe reads it).
	n, _ := diskUsage(tmp)
	meta, err := json.Marshal(snapshotMeta{Bytes: n, Built: time.Now()})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, key+".json"), meta, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(root, key))
}

// ImageInfo describes one cached image.
type ImageInfo struct {
	Key      string    `json:"key"`
	Dir      string    `json:"dir"`
	Bytes    int64     `json:"bytes"`
	LastUsed time.Time `json:"last_used"`
	InUse    bool      `json:"in_use"`
}

// ListImages lists the cache's unpacked images, least recently used first.
func ListImages(cacheDir string) ([]ImageInfo, error) {
	root := filepath.Join(cacheDir, "images")
	entries, err := readCache(root)
	if err != nil {
		return nil, err
	}
	var out []ImageInfo
	for _, e := range entries {
		if !e.IsDir() || !imageKey.MatchString(e.Name()) {
			continue
		}
		s := describe(root, e.Name())
		out = append(out, ImageInfo{Key: s.Commit, Dir: s.Dir, Bytes: s.Bytes, LastUsed: s.LastUsed, InUse: s.InUse})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out, nil
}

// EvictImages removes least recently used images that no run leases
// until the images together take at most max bytes; it returns those
// it removed.
func EvictImages(cacheDir string, max int64) ([]ImageInfo, error) {
	sweepUnpacks(filepath.Join(cacheDir, "images"))
	list, err := ListImages(cacheDir)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, i := range list {
		total += i.Bytes
	}
	var removed []ImageInfo
	for _, i := range list {
		if total <= max {
			break
		}
		if i.InUse {
			continue
		}
		ok, err := RemoveImage(i)
		if err != nil {
			return removed, err
		}
		if ok {
			total -= i.Bytes
			removed = append(removed, i)
		}
	}
	return removed, nil
}

// RemoveImage deletes one unpacked image unless a run leases it; it
// reports whether it did. The lock is taken exclusively and unlinked, as
// for a snapshot, so a lease racing the removal retries and unpacks anew.
func RemoveImage(i ImageInfo) (bool, error) {
	root := filepath.Dir(i.Dir)
	lock := filepath.Join(root, i.Key+".lock")
	f, err := takeForRemoval(lock)
	if f == nil {
		return false, err
	}
	defer f.Close()
	trash, err := os.MkdirTemp(root, ".trash-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(i.Dir, filepath.Join(trash, "i")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	_ = os.Remove(filepath.Join(root, i.Key+".build"))
	_ = os.Remove(filepath.Join(root, i.Key+".json"))
	return true, os.Remove(lock)
}

// sweepUnpacks removes what an unpack killed midway left
// (.unpack-<key>-*): no lease takes it and no eviction counts it, so it
// would hold its bytes for ever. An unpack holds its key's build lock
// throughout, so one whose lock is free is dead.
func sweepUnpacks(root string) {
	entries, _ := readCache(root)
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, ".unpack-")
		if !ok || len(rest) < 71 || !imageKey.MatchString(rest[:71]) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(root, rest[:71]+".build"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			continue
		}
		if flock(f, lockEX|lockNB) == nil {
			_ = os.RemoveAll(filepath.Join(root, name))
		}
		f.Close()
	}
}
