//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
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

// Exec fails off Linux.
func (b *Box) Exec(ctx context.Context, c Command) (*Result, error) { return nil, errNotLinux }

// Layers is empty off Linux.
func (b *Box) Layers() []string { return nil }

// Env is empty off Linux.
func (b *Box) Env() []string { return nil }

// Upper is empty off Linux.
func (b *Box) Upper() string { return "" }

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

// Open fails off Linux (no Change carries content there).
func (c Change) Open() (io.ReadCloser, error) { return nil, errNotLinux }

// runRole is never reached in a working setup off Linux: the harness
// starts no helper processes there.
func runRole(role string) int {
	fmt.Fprintln(os.Stderr, "sandgate sandbox role", role+":", errNotLinux)
	return 2
}
