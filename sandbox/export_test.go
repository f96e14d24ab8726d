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

// MaxLayers is how many layers a snapshot may stack (its own included).
const MaxLayers = maxLayers
