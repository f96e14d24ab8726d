package sandbox

import (
	"context"
	"net"
	"net/netip"
)

// SetProxyHooks replaces the proxy's dialer and interface lister, so tests
// can show a refusal happens before any dial and never send traffic off
// loopback. A nil hook keeps the default.
func SetProxyHooks(p *Proxy, dial func(ctx context.Context, network, addr string) (net.Conn, error), ifaceAddrs func() ([]netip.Addr, error)) {
	p.dial, p.ifaceAddrs = dial, ifaceAddrs
}
