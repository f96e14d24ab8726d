package nodes

import "github.com/sandgate/sandgate/nodes/internal/gitstore"

// ObjectReads is how many objects the promotion repositories have read so
// far, across runs.
func ObjectReads() int64 { return gitstore.Reads() }
