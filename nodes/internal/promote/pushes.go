package promote

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/runtime"
)

// Pushes is the run's push ledger: the latest push on disk (push.json,
// beside commit.json, so it survives a crash: ci nodes read it to know
// which commit CI must judge), and in memory the pushes the review entry
// lists for deletion when the change is rejected.
type Pushes struct {
	runDir string

	mu     sync.Mutex
	pushed []notedPush
}

// ServicePushes is the Input.Services key of the run's *Pushes.
var ServicePushes = runtime.NewServiceKey[*Pushes]("sandgate.pushes")

// NewPushes is the push ledger of the run in runDir.
func NewPushes(runDir string) *Pushes { return &Pushes{runDir: runDir} }

// PushesOf fetches the run's push ledger from a node's input.
func PushesOf(in *runtime.Input) (*Pushes, error) {
	p, ok := ServicePushes.Get(in)
	if !ok || p == nil {
		return nil, errors.New("no push ledger: the runtime was built without nodes.Environment")
	}
	return p, nil
}

// notedPush is one push the run made, and whether rejecting the change
// deletes it.
type notedPush struct {
	gitremote.PushedBranch
	deleteOnReject bool
}

// record writes the run's latest push to push.json.
func (l *Pushes) record(p gitremote.PushedBranch) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(l.runDir, "push.json"), b)
}

// LastPush is the latest push of the run in runDir, from push.json.
func LastPush(runDir string) (*gitremote.PushedBranch, error) {
	b, err := os.ReadFile(filepath.Join(runDir, "push.json"))
	if err != nil {
		return nil, errors.New("nothing was pushed yet: run a git_push node first")
	}
	var p gitremote.PushedBranch
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("push.json: %w", err)
	}
	return &p, nil
}

// note remembers a push for the review entry.
func (l *Pushes) note(p gitremote.PushedBranch, deleteOnReject bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pushed = append(l.pushed, notedPush{p, deleteOnReject})
}

// DeleteOnReject are the branches to delete when the change is rejected.
func (l *Pushes) DeleteOnReject() []gitremote.PushedBranch {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []gitremote.PushedBranch
	for _, p := range l.pushed {
		if p.deleteOnReject {
			out = append(out, p.PushedBranch)
		}
	}
	return out
}
