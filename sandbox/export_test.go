package sandbox

import (
	"context"
	"net"
	"net/netip"
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

// SpareInit waits for the pool's next init and returns its pid as the
// harness sees it (0 when there is none), leaving it in the pool.
func SpareInit() int {
	zygotes.mu.Lock()
	c := zygotes.next
	zygotes.mu.Unlock()
	if c == nil {
		return 0
	}
	z := <-c
	c <- z
	if z == nil {
		return 0
	}
	return z.b.cmd.Process.Pid
}
