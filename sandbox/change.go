package sandbox

import (
	"errors"
	"io/fs"
)

// Change is one path that differs between the base snapshot and the
// workspace. Paths are slash-separated and relative to the workspace.
//
// A Change holds no content: Open streams it from the workspace when
// needed, so the harness's memory does not grow with the change.
type Change struct {
	Path    string      `json:"path"`
	Deleted bool        `json:"deleted,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	// Link is the target of a symbolic link; links are recorded, never
	// followed.
	Link string `json:"link,omitempty"`
	// Size is the length of the content Open yields: a file's apparent
	// size (a sparse file counts in full) or a link target's length.
	Size int64 `json:"size,omitempty"`
	src  *source
}

// ErrChanged reports a path that changed while the harness read it.
var ErrChanged = errors.New("changed while the harness was reading it")
