package gitstore

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sandgate/sandgate/nodes/internal/wspath"
	"github.com/sandgate/sandgate/sandbox"
)

// checkGitPaths refuses, naming each path, a change git itself would
// refuse (git's verify_path and fsck), or one reaching into a repository:
// .git in any spelling a case-folding, NTFS or HFS+ file system treats as
// .git, at any depth, a .gitmodules that is a link, submodules that
// point anywhere but relative URLs, and a .gitattributes that would make
// a checkout differ from the judged blobs (gitattributes.go).
func CheckPaths(changes []sandbox.Change) error {
	var bad []string
	for _, c := range changes {
		link := c.Mode&fs.ModeSymlink != 0
		if why := wspath.GitUnsafe(c.Path, link); why != "" {
			bad = append(bad, fmt.Sprintf("%s (%s)", c.Path, why))
			continue
		}
		if !c.Deleted && wspath.IsDotGitmodules(path.Base(c.Path)) {
			if err := checkGitmodules(c); err != nil {
				bad = append(bad, fmt.Sprintf("%s (%v)", c.Path, err))
			}
		}
		if !c.Deleted && isDotGitattributes(c.Path) {
			if err := checkGitattributes(c); err != nil {
				bad = append(bad, fmt.Sprintf("%s (%v)", c.Path, err))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the change touches paths that must never be promoted: %s", strings.Join(bad, "; "))
	}
	return nil
}

// foldCollision refuses a directory holding two names that a
// case-insensitive file system (macOS and Windows checkouts) stores as
// one file, one of them written by the change d: such a checkout keeps
// one file, with the bytes of whichever git wrote last, so the gates
// would judge two files where users get one. Collisions the base already
// had are the repository's own and stay.
func foldCollision(list []object.TreeEntry, d *dirChange) error {
	seen := make(map[string]string, len(list))
	var bad []string
	for _, e := range list {
		k := strings.ToLower(e.Name)
		other, ok := seen[k]
		if ok && (d.touches(e.Name) || d.touches(other)) {
			bad = append(bad, fmt.Sprintf("%s and %s", other, e.Name))
		}
		seen[k] = e.Name
	}
	if len(bad) > 0 {
		return fmt.Errorf("names a case-insensitive checkout holds as one file: %s", strings.Join(bad, "; "))
	}
	return nil
}

// touches reports whether the change writes the entry name of d.
func (d *dirChange) touches(name string) bool {
	_, file := d.files[name]
	_, dir := d.dirs[name]
	return file || dir
}
