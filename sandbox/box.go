package sandbox

import (
	"io"
	"time"
)

// Options configure a box.
type Options struct {
	Policy Policy
	// Workspace is a host directory mounted read-write at /work; writes
	// to it are not under the disk limit. Leave it empty and set Snapshot
	// to get a copy-on-write overlay instead.
	Workspace string
	// Snapshot is a read-only directory (a checkout of the base commit)
	// used as the overlay's lower layer; changes land in the upper layer
	// on the box's disk (StateDir/disk.img; see Upper).
	Snapshot string
	// StateDir holds the box's private files (mount point, overlay upper
	// layer, init log). It must not be inside Workspace.
	StateDir string
	// AuditPath, when set, gets one JSON line per command.
	AuditPath string
	// Audit, when set, gets the audit lines instead of AuditPath, one
	// Write per line (the harness wraps its file to redact credentials).
	Audit io.Writer
	// ProxySocket is the harness proxy's unix socket, for allowlist mode.
	ProxySocket string
	// AllowUnconfined permits Policy.Isolation "none". Without it such a
	// policy is refused.
	AllowUnconfined bool
	// NoOverlay copies the snapshot instead of mounting an overlay. Start
	// falls back to this by itself when the kernel refuses the overlay.
	NoOverlay bool
	// Seed is a host directory in the overlay upper layer's format (a
	// copy of another box's Upper, whiteouts included) that the new box's
	// workspace starts from, on top of Snapshot: a box built from a
	// run's change, for held-out tests. Only with an overlay.
	Seed string
}

// Command is one command to run in the box.
type Command struct {
	Args []string
	// Dir is relative to the workspace (or absolute inside the box).
	Dir     string
	Timeout time.Duration
	Stdin   []byte
	// OutputBytes caps this command's captured output in place of
	// Limits.OutputBytes, up to MaxOutputBytes; zero keeps the limit. The
	// harness sets it per request, so nothing in the box can raise it.
	OutputBytes int
	// Live, when set, is given the command's output while it runs: init
	// sends what it has every LiveEvery, and Live gets it in order from
	// a goroutine of its own (never the box's reader), all of it before
	// Exec returns, the end included. Result.Output still holds the
	// whole output. Output is the box's text: hostile to whoever shows it.
	// A Live that falls too far behind misses pieces (a note at the end
	// says how much); one that is a Gapper is told where.
	Live io.Writer
}

// MaxOutputBytes bounds Command.OutputBytes: the harness holds the output
// in memory (init sends it on in chunks as it comes).
const MaxOutputBytes = 256 << 20

// Layer is one line of the doctor's report.
type Layer struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Result is the outcome of one command.
type Result struct {
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the command, if any.
	Signal   string        `json:"signal,omitempty"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Output   []byte        `json:"output"`
	Dropped  int64         `json:"dropped,omitempty"`
	Duration time.Duration `json:"duration"`
	// DiskFull, set by the harness, says the command failed with the box's
	// disk limit reached; DiskNote says so in words for feedback.
	DiskFull bool   `json:"disk_full,omitempty"`
	DiskNote string `json:"disk_note,omitempty"`
}
