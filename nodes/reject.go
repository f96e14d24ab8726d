package nodes

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// notedPush is one push the run made, and whether rejecting the change
// deletes it.
type notedPush struct {
	gitremote.PushedBranch
	deleteOnReject bool
}

// recordPush writes the run's latest push to push.json, beside
// commit.json, so it survives a crash: ci nodes read it to know which
// commit CI must judge.
func (w *Workspace) recordPush(p gitremote.PushedBranch) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(w.RunDir, "push.json"), b)
}

// lastPush is the run's latest push, from push.json.
func (w *Workspace) lastPush() (*gitremote.PushedBranch, error) {
	b, err := os.ReadFile(filepath.Join(w.RunDir, "push.json"))
	if err != nil {
		return nil, errors.New("nothing was pushed yet: run a git_push node first")
	}
	var p gitremote.PushedBranch
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("push.json: %w", err)
	}
	return &p, nil
}

func (w *Workspace) notePush(p gitremote.PushedBranch, deleteOnReject bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pushed = append(w.pushed, notedPush{p, deleteOnReject})
}

// pushes are the branches to delete when the change is rejected.
func (w *Workspace) pushes() []gitremote.PushedBranch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []gitremote.PushedBranch
	for _, p := range w.pushed {
		if p.deleteOnReject {
			out = append(out, p.PushedBranch)
		}
	}
	return out
}
