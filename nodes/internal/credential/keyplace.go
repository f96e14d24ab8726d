package credential

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
)

// Place is a host directory whose files an agent can read or write: the
// repository (its snapshot is the box's workspace), the runs directory (a
// box's writes land in its run's directory) or a cache shown in the box.
type Place struct{ What, Dir string }

// CheckKeyPlaces refuses, at the key_file it is about, an app's private
// key inside one of places: a key there is a key given to the agent,
// which mints any token the installation allows. Paths are compared
// with their links resolved, so a link elsewhere that leads inside (or a
// key reached through a linked directory) counts as inside.
func CheckKeyPlaces(bp *blueprint.Blueprint, places []Place) error {
	var ds blueprint.Diagnostics
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		c, _ := Parse(n)
		if c == nil || c.KeyFile == "" {
			continue
		}
		key := resolve(c.KeyFile)
		for _, p := range places {
			if p.Dir == "" {
				continue
			}
			if dir := resolve(p.Dir); key == dir || strings.HasPrefix(key, dir+string(filepath.Separator)) {
				ds = append(ds, diag(n, []string{"github_app", "key_file"}, fmt.Sprintf("%s is inside %s (%s), which the agent can read; keep the app's private key outside it", c.KeyFile, p.What, p.Dir)))
				break
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	return ds
}

// resolve is path absolute and with its links resolved as far as it
// exists.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	dir, base := filepath.Split(abs)
	if dir = filepath.Clean(dir); dir != abs && dir != string(filepath.Separator) {
		return filepath.Join(resolve(dir), base)
	}
	return abs
}

// checkKeyMode refuses a private key other users may read or write, as
// ssh refuses one: on a shared machine anyone who can read it mints the
// installation's tokens.
func checkKeyMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s is open to group or others (mode %04o); chmod 600 it", path, m)
	}
	return nil
}
