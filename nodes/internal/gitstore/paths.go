package gitstore

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/wspath"
	"github.com/sandgate/sandgate/sandbox"
)

// checkGitPaths refuses, naming each path, a change git itself would
// refuse (git's verify_path and fsck), or one reaching into a repository:
// .git in any spelling a case-folding, NTFS or HFS+ file system treats as
// .git, at any depth, a .gitmodules that is a link, and submodules that
// point anywhere but relative URLs.
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
	}
	if len(bad) > 0 {
		return fmt.Errorf("the change touches paths that must never be promoted: %s", strings.Join(bad, "; "))
	}
	return nil
}
