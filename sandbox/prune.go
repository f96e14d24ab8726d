package sandbox

import "time"

// StaleSnapshots lists the cache's snapshots last used before cutoff,
// least recently used first, split into those no run holds (RemoveSnapshot
// deletes them) and those a live run leases, which are never removed.
func StaleSnapshots(cacheDir string, cutoff time.Time) (stale, held []SnapshotInfo, err error) {
	list, err := ListSnapshots(cacheDir)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range list {
		switch {
		case !s.LastUsed.Before(cutoff):
		case s.InUse:
			held = append(held, s)
		default:
			stale = append(stale, s)
		}
	}
	return stale, held, nil
}
