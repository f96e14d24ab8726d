package agent

import (
	"errors"
	"path"
	"strings"
)

// workDir is where the workspace is mounted inside the box.
const workDir = "/work"

// confine maps a model-supplied path to a path inside the workspace. It
// refuses absolute paths, any ".." component and the .git directory; the
// box itself stops a symlink from leading anywhere writable outside.
func confine(p string) (string, error) {
	if p == "" || p == "." {
		return workDir, nil
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if strings.HasPrefix(p, "/") {
		return "", errors.New("absolute paths are not allowed: use a path relative to the repository root")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", errors.New(`".." is not allowed: paths stay inside the repository`)
		}
	}
	clean := path.Clean(p)
	if clean == ".git" || strings.HasPrefix(clean, ".git/") {
		return "", errors.New(".git is not yours to read or change")
	}
	return workDir + "/" + clean, nil
}
