// Package atomicfile replaces a file so that a reader sees the old
// content or the new, never part of either: the harness's records
// (verify.json, commit.json, push.json, a review entry's files, a
// branch's ref) are read by other processes while a run writes them.
//
// It imports nothing of sandgate's, and must not.
package atomicfile
