package nodes

// ObjectReads is how many objects the promotion repositories have read so
// far, across runs.
func ObjectReads() int64 { return objectReads.Load() }
