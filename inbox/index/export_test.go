package index

// Watching says whether the index follows events rather than scanning.
func Watching(ix *Index) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.watch != nil
}
