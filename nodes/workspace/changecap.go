package workspace

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gitstore"
	"github.com/sandgate/sandgate/sandbox"
)

// DefaultMaxChangeBytes is the default cap on what a change may hold.
const DefaultMaxChangeBytes = 64 << 20

// ChangeCap is the cap on what the run's change may hold.
func (w *Workspace) ChangeCap() int64 {
	if w.MaxChangeBytes > 0 {
		return w.MaxChangeBytes
	}
	return DefaultMaxChangeBytes
}

// ChangeBytes is what a change holds: added or modified files at their
// apparent size, plus link targets.
func ChangeBytes(changes []sandbox.Change) int64 {
	var n int64
	for _, c := range changes {
		if !c.Deleted {
			n += c.Size
		}
	}
	return n
}

// CheckPromotable refuses a change that must not leave the run: one over
// the size cap, or one that touches paths git itself refuses or that
// would configure the repository of whoever checks it out.
func (w *Workspace) CheckPromotable(changes []sandbox.Change) error {
	if err := checkChangeSize(changes, w.ChangeCap()); err != nil {
		return err
	}
	return gitstore.CheckPaths(changes)
}

// checkChangeSize fails when the change holds more than max bytes,
// naming the numbers and the biggest paths.
func checkChangeSize(changes []sandbox.Change, max int64) error {
	total := ChangeBytes(changes)
	if total <= max {
		return nil
	}
	big := make([]sandbox.Change, 0, len(changes))
	for _, c := range changes {
		if !c.Deleted {
			big = append(big, c)
		}
	}
	sort.SliceStable(big, func(i, j int) bool { return big[i].Size > big[j].Size })
	var names []string
	for i, c := range big {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(big)-5))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", c.Path, feedback.HumanBytes(c.Size)))
	}
	return fmt.Errorf("the change holds %s (%d bytes) in %d files, over the cap of %s (%d bytes, EnvOptions.MaxChangeBytes); biggest: %s",
		feedback.HumanBytes(total), total, len(big), feedback.HumanBytes(max), max, strings.Join(names, ", "))
}
