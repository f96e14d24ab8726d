//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// storeObjects returns the object directory of the harness's object
// store that the workspace dir's .git borrows from (its only alternate),
// or "" when it borrows from none. A snapshot holds no objects of its
// own and its alternate is a host path the box cannot see, so the box
// mounts the store's objects read-only at /work/.git/objects. Only a
// directory marked as a store, marked by the harness's own uid, is ever
// mounted: a .git whose alternates point elsewhere (a user's checkout
// bound as the workspace) gets nothing.
func storeObjects(dir string) string {
	if dir == "" {
		return ""
	}
	if st, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !st.IsDir() {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, ".git", "objects", "info", "alternates"))
	if err != nil {
		return ""
	}
	lines := bytes.Fields(b)
	if len(lines) != 1 {
		return ""
	}
	objects := string(lines[0])
	if !filepath.IsAbs(objects) || filepath.Clean(objects) != objects || filepath.Base(objects) != "objects" {
		return ""
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(filepath.Dir(objects), storeMarker), &st); err != nil ||
		st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		return ""
	}
	if fi, err := os.Lstat(objects); err != nil || !fi.IsDir() {
		return ""
	}
	return objects
}

// mountObjects shows the store's objects read-only at work/.git/objects
// (init's side, before the pivot). The mount point must be a directory
// reached through directories only: a symlink there would move the
// mount elsewhere.
func mountObjects(objects, work string) error {
	dst := work
	for _, c := range []string{".git", "objects"} {
		dst = filepath.Join(dst, c)
		if st, err := os.Lstat(dst); err != nil || !st.IsDir() {
			return fmt.Errorf("mount the git objects: %s is not a directory", dst)
		}
	}
	return bindRO(objects, dst)
}
