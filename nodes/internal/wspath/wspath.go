// Package wspath holds the one set of rules for paths inside the
// workspace: which path a model, a patch or a change may name (Clean), and
// which path git itself would refuse to promote (GitUnsafe). Every node
// that accepts a workspace-relative path asks here, so the rules cannot
// drift apart.
package wspath

import (
	"fmt"
	"path"
	"strings"
)

// Clean checks a workspace-relative path supplied from outside the
// harness (a model's tool call, a patch header) and returns it cleaned;
// "." names the workspace root. It refuses the empty path, a NUL byte, an
// absolute path, any ".." component (even one Clean would fold away: the
// caller did not mean what it wrote), and .git in any spelling some file
// system resolves to .git, at any depth. The box stops a symlink from
// leading anywhere writable outside; this stops the name.
func Clean(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path")
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("%q: path contains a NUL byte", p)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%s: absolute paths are not allowed: use a path relative to the repository root", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf(`%s: ".." is not allowed: paths stay inside the repository`, p)
		}
	}
	clean := path.Clean(p)
	for _, part := range strings.Split(clean, "/") {
		if IsDotGit(part) {
			return "", fmt.Errorf("%s: .git is not yours to read or change", p)
		}
	}
	return clean, nil
}
