//go:build linux

package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"sync"
	"time"
)

// auditLog appends one JSON line per command, written by the harness
// outside the box.
type auditLog struct {
	mu sync.Mutex
	w  io.Writer
	f  *os.File
}

// auditOf is the audit log Options ask for, or nil.
func auditOf(o Options) (*auditLog, error) {
	switch {
	case o.Audit != nil:
		return &auditLog{w: o.Audit}, nil
	case o.AuditPath != "":
		return openAudit(o.AuditPath)
	}
	return nil, nil
}

func openAudit(path string) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &auditLog{w: f, f: f}, nil
}

type auditEntry struct {
	Time       time.Time `json:"time"`
	Args       []string  `json:"args"`
	Dir        string    `json:"dir,omitempty"`
	ExitCode   int       `json:"exit_code"`
	Signal     string    `json:"signal,omitempty"`
	TimedOut   bool      `json:"timed_out,omitempty"`
	DurationMS int64     `json:"duration_ms"`
	OutputSize int       `json:"output_bytes"`
	Dropped    int64     `json:"output_dropped,omitempty"`
	Error      string    `json:"error,omitempty"`
}

func (a *auditLog) command(c Command, r *Result, err error, d time.Duration) {
	if a == nil {
		return
	}
	e := auditEntry{Time: time.Now().UTC(), Args: c.Args, Dir: c.Dir, DurationMS: d.Milliseconds()}
	if r != nil {
		e.ExitCode, e.Signal, e.TimedOut, e.OutputSize, e.Dropped = r.ExitCode, r.Signal, r.TimedOut, len(r.Output), r.Dropped
	}
	if err != nil {
		e.Error = err.Error()
	}
	b, _ := json.Marshal(e)
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(append(b, '\n'))
}

func (a *auditLog) close() error {
	if a.f == nil {
		return nil
	}
	return a.f.Close()
}
