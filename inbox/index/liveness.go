package index

import (
	"os"

	"github.com/sandgate/sandgate/runtime"
)

// MarkInterrupted turns an unfinished run whose harness is gone into
// runtime.StatusInterrupted (runtime.AliveIn says so from its pid file).
// A journal with no event yet is a run starting: its pid file comes
// before its first event.
func MarkInterrupted(v *View, root *os.Root) {
	if v.Status != string(runtime.StatusRunning) || v.finished || v.Last.IsZero() {
		return
	}
	if alive, why := runtime.AliveIn(root); !alive {
		v.Status, v.Reason = string(runtime.StatusInterrupted), why
	}
}

// LiveStatus is the status and reason of an unfinished run now: running,
// or interrupted when its harness is gone.
func LiveStatus(runs *os.Root, name string) (string, string) {
	r, err := runs.OpenRoot(name)
	if err != nil {
		return string(runtime.StatusRunning), ""
	}
	defer r.Close()
	if alive, why := runtime.AliveIn(r); !alive {
		return string(runtime.StatusInterrupted), why
	}
	return string(runtime.StatusRunning), ""
}
