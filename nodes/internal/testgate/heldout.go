package testgate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/gate"
)

// CheckHidden refuses, before anything runs, a held-out test that has the
// path of a file in the repository: placing it would replace that file.
func CheckHidden(bp *blueprint.Blueprint, snapshot string) error {
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		if n.Type != "test" {
			continue
		}
		c, err := blueprint.Decode[TestConfig](n)
		if err != nil {
			return fmt.Errorf("%s: nodes.%s: %w", bp.File, id, err)
		}
		dir := c.Hidden
		if dir == "" {
			continue
		}
		files, err := gate.HiddenFiles(dir)
		if err != nil {
			return fmt.Errorf("%s: nodes.%s.hidden: %w", bp.File, id, err)
		}
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(snapshot, filepath.FromSlash(f))); err == nil {
				return fmt.Errorf("%s: nodes.%s.hidden: %s collides with the repository's %s: held-out tests must not replace repository files; rename it",
					bp.File, id, filepath.Join(dir, filepath.FromSlash(f)), f)
			}
		}
	}
	return nil
}
