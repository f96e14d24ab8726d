package gitstore

import (
	"io"

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

// Reads is how many objects every Repo in this process has read, so
// tests can prove a step reads what the change touches and nothing more.
func Reads() int64 { return objectReads.Load() }
