package sandbox

import (
	"sort"
	"time"
)

// StaleSnapshots lists the cache's snapshots last used before cutoff,
// least recently used first, split into those no run holds (RemoveSnapshot
// deletes them) and those a live run leases, which are never removed.
// Stale layers come before the snapshots they stack on, so removing
// them in order can take a whole chain.
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
	sort.SliceStable(stale, func(i, j int) bool { return stale[i].Lower > stale[j].Lower })
	return stale, held, nil
}
