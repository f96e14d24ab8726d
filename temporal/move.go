package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"go.temporal.io/sdk/temporal"

	"github.com/sandgate/sandgate/runtime"
)

// MaxChange bounds the change a run carries in its history (Temporal
// refuses payloads past 2 MB). A run with a larger change cannot move: a
// lost host hands it off, saying so.
const MaxChange = 1 << 20

// versionMove names the change that brought moving runs: runs started
// before it (no marker in their history) still hand off on a lost host.
const versionMove = "move-on-host-loss"

// Change is the run's change as the harness recorded it right after a
// node attempt: the patch the workspace's Patch rendered and its
// fingerprint. It lives in the workflow's history, out of any box's
// reach; a run moved to another host is rebuilt from it alone.
type Change struct {
	Patch []byte
	// Records are the harness's promotion records (verdicts, commit,
	// push, review state: runtime.Environment.Records), so a push,
	// review or ci node re-run on another host finds what was done.
	Records []byte `json:",omitempty"`
	// Fingerprint names Patch and Records (stateFingerprint).
	Fingerprint string
}

// moveInput asks a host to rebuild a run whose host was lost.
type moveInput struct {
	// From is the lost host (for messages: a restarted lost host may
	// rebuild the run as any other).
	From string
	// Events is the whole journal so far (the workflow's record).
	Events []runtime.Event
	// Change is the last recorded change (nil: none yet, the base).
	Change *Change `json:",omitempty"`
}

// fingerprint names a patch's content.
func fingerprint(patch []byte) string {
	sum := sha256.Sum256(patch)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// stateFingerprint names a change and its records: the patch's
// fingerprint alone while there are no records (as runs recorded before
// records came along).
func stateFingerprint(patch, records []byte) string {
	if len(records) == 0 {
		return fingerprint(patch)
	}
	return fingerprint(patch) + "+" + fingerprint(records)
}

// takeChange records the workspace's change and the harness's records
// after an attempt; nil when they equal have. why says why none could be
// taken.
func takeChange(r *runtime.Remote, have string) (c *Change, why string) {
	patch, err := r.Change()
	if err != nil {
		return nil, fmt.Sprintf("the change could not be recorded: %v", err)
	}
	records, err := r.Records()
	switch {
	case err != nil:
		return nil, fmt.Sprintf("the run's records could not be taken: %v", err)
	case len(patch)+len(records) > MaxChange:
		return nil, fmt.Sprintf("the change and records (%d bytes) are larger than a run's history carries (%d)", len(patch)+len(records), MaxChange)
	}
	fp := stateFingerprint(patch, records)
	if fp == have {
		return nil, ""
	}
	return &Change{Patch: patch, Records: records, Fingerprint: fp}, ""
}

// rebuild opens a lost host's run here: a fresh workspace from the run's
// base commit, the recorded change applied and its fingerprint checked
// against the record, the journal written from the workflow's events.
// Nothing of the old workspace comes along.
func (h *Host) rebuild(ctx context.Context, in openInput, res openResult) (openResult, error) {
	m := in.Move
	// A host that still holds the run (a worker cut off, not dead, or
	// restarted) gives its copy up: the record is the workflow's.
	h.mu.Lock()
	old := h.runs[in.RunID]
	delete(h.runs, in.RunID)
	h.mu.Unlock()
	if old != nil {
		_ = old.Abort()
	}
	patch, records, want := []byte(nil), []byte(nil), fingerprint(nil)
	if m.Change != nil {
		patch, records, want = m.Change.Patch, m.Change.Records, m.Change.Fingerprint
	}
	if got := stateFingerprint(patch, records); got != want {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the recorded change does not match its fingerprint (%s, recorded %s): refused", got, want), "RecordTampered", nil)
	}
	bp, err := h.Runtime.Registry.Parse(in.Run.File, in.Run.Source)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "BlueprintInvalid", nil)
	}
	_ = os.RemoveAll(res.Dir) // a stale copy from an earlier stay here: the record is the workflow's
	r, info, err := h.runtimeFor(in.Run.Repo, in.Run.Rev).OpenRemote(ctx, bp, in.RunID, runtime.RemoteOptions{Workspace: in.Run.Repo, Labels: in.Run.Labels})
	if err != nil {
		return res, openFailed(err)
	}
	if err := restore(r, patch, records, m.Events); err != nil {
		_ = r.Abort()
		_ = os.RemoveAll(res.Dir)
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "RebuildFailed", nil)
	}
	h.mu.Lock()
	h.runs[in.RunID] = r
	h.mu.Unlock()
	res.Info = info
	return res, nil
}

// restore applies the recorded change, checks the rebuilt workspace's
// fingerprint, writes the harness's records back and journals the run's
// events.
func restore(r *runtime.Remote, patch, records []byte, events []runtime.Event) error {
	if err := r.Restore(patch); err != nil {
		return fmt.Errorf("apply the recorded change: %w", err)
	}
	got, err := r.Change()
	if err != nil {
		return fmt.Errorf("read the rebuilt change: %w", err)
	}
	if fp, want := fingerprint(got), fingerprint(patch); fp != want {
		return fmt.Errorf("the rebuilt workspace's fingerprint %s differs from the recorded %s", fp, want)
	}
	if err := r.RestoreRecords(records); err != nil {
		return fmt.Errorf("restore the run's records: %w", err)
	}
	if _, err := r.Record(events); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}
