//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// errNotLinux is what every box operation returns off Linux: the
// confinement is built from Linux namespaces, Landlock and seccomp, and
// without them nothing runs at all (fail closed, never unconfined).
var errNotLinux = fmt.Errorf("sandgate runs commands only on Linux: the sandbox needs namespaces, Landlock and seccomp (%w on %s)",
	ErrUnavailable, runtime.GOOS)

// Platform reports that boxes cannot run on this OS.
func Platform() error { return errNotLinux }

// Box is a running sandbox; off Linux none can be started.
type Box struct{}

// Start fails off Linux with an error wrapping ErrUnavailable.
func Start(ctx context.Context, o Options) (*Box, error) { return nil, errNotLinux }

// ReleaseSpares does nothing off Linux: no box is started ahead.
func ReleaseSpares() {}

// Exec fails off Linux.
func (b *Box) Exec(ctx context.Context, c Command) (*Result, error) { return nil, errNotLinux }

// Layers is empty off Linux.
func (b *Box) Layers() []string { return nil }

// Env is empty off Linux.
func (b *Box) Env() []string { return nil }

// Upper is empty off Linux.
func (b *Box) Upper() string { return "" }

// CacheUpper is empty off Linux.
func (b *Box) CacheUpper(string) string { return "" }

// Merged is empty off Linux.
func (b *Box) Merged() string { return "" }

// Close does nothing off Linux.
func (b *Box) Close() error { return nil }

// Discard does nothing off Linux.
func (b *Box) Discard() error { return nil }

// Check reports that no layer is available off Linux.
func Check(ctx context.Context) []Layer {
	return []Layer{{Name: "platform", OK: false, Detail: errNotLinux.Error()}}
}

// Changes fails off Linux: the workspace is a Linux overlay, and the
// safe reader (openat2 beneath a root) is Linux-only.
func Changes(lower, upper, merged string) ([]Change, error) { return nil, errNotLinux }

// source is where a change's content lives; off Linux there is none.
type source struct{}

// Open yields what a Change carries by itself (a link's target); a
// file's content is read from a workspace, which exists only on Linux.
func (c Change) Open() (io.ReadCloser, error) {
	switch {
	case c.Deleted:
		return nil, fmt.Errorf("%s: deleted, it has no content", c.Path)
	case c.Mode&fs.ModeSymlink != 0:
		return io.NopCloser(strings.NewReader(c.Link)), nil
	case c.src == nil:
		return nil, fmt.Errorf("%s: no content (not listed by Changes)", c.Path)
	}
	return nil, errNotLinux
}

// runRole is never reached in a working setup off Linux: the harness
// starts no helper processes there.
func runRole(role string) int {
	fmt.Fprintln(os.Stderr, "sandgate sandbox role", role+":", errNotLinux)
	return 2
}

// Process is a streaming command; off Linux none can be started.
type Process struct{}

// Start fails off Linux.
func (b *Box) Start(ctx context.Context, c Command) (*Process, error) { return nil, errNotLinux }

// Write fails off Linux.
func (p *Process) Write(b []byte) (int, error) { return 0, errNotLinux }

// CloseStdin fails off Linux.
func (p *Process) CloseStdin() error { return errNotLinux }

// Read fails off Linux.
func (p *Process) Read(b []byte) (int, error) { return 0, errNotLinux }

// Kill does nothing off Linux.
func (p *Process) Kill() {}

// Wait fails off Linux.
func (p *Process) Wait() (*Result, error) { return nil, errNotLinux }

// Done is closed off Linux: nothing runs.
func (p *Process) Done() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// handedOver: off Linux there is no commands' uid.
func handedOver(string) bool { return true }

// handOverEntry: off Linux there is no commands' uid.
func handOverEntry(string, *sysStat) error { return nil }

// DelegatedDir is where Delegate makes users' cgroup subtrees (Linux only).
const DelegatedDir = "sandgate-users"

// Delegate fails off Linux: there are no cgroups to hand over.
func Delegate(uid, gid int) ([]string, error) { return nil, errNotLinux }

// Mode reports that no box can be made off Linux.
func Mode() Layer { return Layer{"mode", false, errNotLinux.Error()} }
