package gitstore

import (
	"bytes"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/sandgate/sandgate/sandbox"
)

// CopyContent streams one change's content into dst.
func CopyContent(dst io.Writer, c sandbox.Change) error {
	r, err := c.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(dst, r)
	return err
}

// Capped keeps the first 64 KiB written to it: a remote cannot make the
// harness hold an unbounded error message.
type Capped struct{ bytes.Buffer }

func (c *Capped) Write(p []byte) (int, error) {
	if room := 64<<10 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// ValidBranch reports whether git would accept name as a branch.
func ValidBranch(name string) bool {
	return plumbing.NewBranchReferenceName(name).IsBranch() && !strings.ContainsAny(name, " ~^:?*[\\") && !strings.Contains(name, "..")
}

// Short is a commit hash's first 12 characters.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// Reads is how many objects every Repo in this process has read, so
// tests can prove a step reads what the change touches and nothing more.
func Reads() int64 { return objectReads.Load() }
