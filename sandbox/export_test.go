//go:build linux

package sandbox

import (
	"context"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

// SetProxyHooks replaces the proxy's dialer and interface lister, so tests
// can show a refusal happens before any dial and never send traffic off
// loopback. A nil hook keeps the default.
func SetProxyHooks(p *Proxy, dial func(ctx context.Context, network, addr string) (net.Conn, error), ifaceAddrs func() ([]netip.Addr, error)) {
	p.dial, p.ifaceAddrs = dial, ifaceAddrs
}

// AttachLoop binds an image to a loop device, as a box's disk does, so a
// test can hold an image the way a killed box's teardown does.
var AttachLoop = attachLoop

// SetImageFreeTimeout bounds how long a box waits for its disk image to
// be let go; it returns a function restoring the default.
func SetImageFreeTimeout(d time.Duration) func() {
	old := imageFreeTimeout
	imageFreeTimeout = d
	return func() { imageFreeTimeout = old }
}

// Pooled reports whether the box's init came from the pool of inits
// started ahead (see zygote_linux.go).
func Pooled(b *Box) bool { return b.pooled }

// InitPID is the host pid of the box's init.
func InitPID(b *Box) int { return b.cmd.Process.Pid }

// SpareInit waits for the pool's next init and returns its pid as the
// harness sees it (0 when there is none), leaving it in the pool.
func SpareInit() int {
	z := waitSpare()
	if z == nil {
		return 0
	}
	return z.b.cmd.Process.Pid
}

// waitSpare waits for the spare being made and returns it (nil when there
// is none), leaving it in the pool.
func waitSpare() *zygote {
	zygotes.mu.Lock()
	c := zygotes.next
	zygotes.mu.Unlock()
	if c == nil {
		return nil
	}
	z := <-c
	c <- z
	return z
}

// useTemplateDir points the disk templates at dir for one test. The
// pool's next spare is made in the background from the template
// directory, so it is waited for and thrown away before the switch and
// again before the switch back: none is made from another test's
// directory, and none is left in this one's when it is removed.
func useTemplateDir(t *testing.T, dir string) {
	drainPool()
	old := imageTemplateDir
	imageTemplateDir = func() string { return dir }
	t.Cleanup(func() { drainPool(); imageTemplateDir = old })
}

// drainPool waits for the pool's next spare and throws it away.
func drainPool() { ReleaseSpares() }

// MaxLayers is how many layers a snapshot may stack (its own included).
const MaxLayers = maxLayers

// WaitImageFree waits up to d for no loop device to hold image: the
// kernel lets a box's loop device go when the last mount of its disk is
// torn down, which may finish after the box's init was reaped.
func WaitImageFree(image string, d time.Duration) error { return waitImageFree(image, d) }

// LeaseLock is the lease's lock file, for a test to hand to a child the
// way a fork does.
func LeaseLock(l *SnapshotLease) *os.File { return l.f }
