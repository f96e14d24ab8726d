// Package atomicfile replaces a file so that a reader sees the old
// content or the new, never part of either: the harness's records
// (verify.json, commit.json, push.json, a review entry's files, a
// branch's ref) are read by other processes while a run writes them.
//
// It imports nothing of sandgate's, and must not.
package atomicfile

import "os"

// Write writes data beside path and renames it into place.
func Write(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
