package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

// A gate judges the bytes of the candidate tree's blobs, and a user runs
// the tests on a checkout of the commit. The two differ when a
// .gitattributes asks git to convert files on checkout (ident expands
// $Id$, eol and text rewrite line ends, working-tree-encoding re-encodes,
// filter runs a program) or when git archive builds the module zip a
// dependent downloads (export-ignore drops files, export-subst expands
// $Format$). A change could then pass on bytes no clone holds. So a
// .gitattributes the change writes may only set attributes that leave
// checked-out and archived bytes alone; anything else, a macro included
// (its meaning is defined elsewhere), is refused.

// safeAttributes leave a checkout's and an archive's bytes as the blob
// holds them. binary is the built-in macro -diff -merge -text.
var safeAttributes = map[string]bool{
	"diff": true, "merge": true, "binary": true, "whitespace": true, "delta": true,
	"encoding": true, "conflict-marker-size": true, "linguist-generated": true,
	"linguist-vendored": true, "linguist-documentation": true, "linguist-language": true,
	"linguist-detectable": true,
}

// maxGitattributes bounds the .gitattributes file the harness reads.
const maxGitattributes = 1 << 20

// isDotGitattributes reports whether a path's last element is a
// .gitattributes in any spelling a case-folding file system reads as one.
func isDotGitattributes(p string) bool {
	return strings.EqualFold(path.Base(p), ".gitattributes")
}

// checkGitattributes refuses a .gitattributes that sets an attribute
// outside safeAttributes (unsetting one, -text or !ident, is fine), and
// one that is a link, which older gits follow.
func checkGitattributes(c sandbox.Change) error {
	if c.Mode&fs.ModeSymlink != 0 {
		return errors.New("a .gitattributes that is a link")
	}
	if c.Size > maxGitattributes {
		return fmt.Errorf(".gitattributes larger than %d bytes", maxGitattributes)
	}
	var buf bytes.Buffer
	if err := CopyContent(&buf, c); err != nil {
		return err
	}
	var bad []string
	for i, line := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		for _, a := range f[1:] {
			if why := unsafeAttribute(a); why != "" {
				bad = append(bad, fmt.Sprintf("line %d: %s", i+1, why))
			}
		}
		if strings.HasPrefix(f[0], "[attr]") {
			bad = append(bad, fmt.Sprintf("line %d: macro %s", i+1, strings.TrimPrefix(f[0], "[attr]")))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("attributes that change what a checkout or archive holds, so the gates would judge bytes no clone has: %s",
			strings.Join(bad, ", "))
	}
	return nil
}

// unsafeAttribute is why an attribute token may change checked-out or
// archived bytes, or "".
func unsafeAttribute(a string) string {
	if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "!") {
		return ""
	}
	name, _, _ := strings.Cut(a, "=")
	if safeAttributes[name] {
		return ""
	}
	return fmt.Sprintf("%q", a)
}
