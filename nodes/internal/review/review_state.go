package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
)

// reviewState is what a review node keeps in the run directory so that
// running it again in the same run (a resume after a crash, or a retry
// after the run was sent back) finds its pull request and keeps its wait
// deadline instead of starting over.
type reviewState struct {
	path string
	// Commit is the commit under review; WaitSince is when the wait for
	// its decision began.
	Commit      string    `json:"commit"`
	WaitSince   time.Time `json:"wait_since"`
	PullRequest int       `json:"pull_request,omitempty"`
}

// loadReviewState reads the node's state; a wait for another commit (or
// none) starts now.
func loadReviewState(runDir, node, commit string) (*reviewState, error) {
	st := &reviewState{path: filepath.Join(runDir, "review-"+node+".json")}
	b, err := os.ReadFile(st.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := json.Unmarshal(b, st); err != nil {
			return nil, fmt.Errorf("%s: %w", st.path, err)
		}
	}
	if st.Commit != commit || st.WaitSince.IsZero() {
		st.Commit, st.WaitSince = commit, time.Now().UTC()
	}
	return st, nil
}

func (st *reviewState) save() error { return atomicfile.WriteJSON(st.path, st) }
