package sandbox

import (
	"net"
	"net/netip"
	"slices"
)

// addrClass names a special-purpose block (IANA's IPv4 and IPv6
// special-purpose registries, plus multicast and reserved space). The
// first matching entry names the class.
type addrClass struct {
	pfx  netip.Prefix
	name string
}

func classes(pairs ...string) []addrClass {
	out := make([]addrClass, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, addrClass{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

var v4Special = classes(
	"0.0.0.0/8", "this-network", // dialing 0.0.0.0 reaches the local host
	"10.0.0.0/8", "private", "172.16.0.0/12", "private", "192.168.0.0/16", "private",
	"100.64.0.0/10", "shared-address (CGNAT)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local",
	"192.0.0.0/24", "IETF protocol assignment",
	"192.0.2.0/24", "documentation", "198.51.100.0/24", "documentation", "203.0.113.0/24", "documentation",
	"192.88.99.0/24", "6to4 relay anycast",
	"198.18.0.0/15", "benchmarking",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// v6Special is checked after the forms that embed an IPv4 address; any
// address outside global unicast 2000::/3 that none of these names is
// reserved.
var v6Special = classes(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"2001:2::/48", "benchmarking",
	"2001:db8::/32", "documentation", "3fff::/20", "documentation",
	"2001::/23", "IETF protocol assignment",
	"fc00::/7", "private",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local",
	"ff00::/8", "multicast",
)

var globalUnicast = netip.MustParsePrefix("2000::/3")

var metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}

// embedded returns the IPv4 addresses an IPv6 address carries to a
// translator or tunnel, so that 64:ff9b::7f00:1 is judged as 127.0.0.1.
// IPv4-mapped (::ffff:0:0/96) addresses are unmapped before this.
func embedded(a netip.Addr) (form string, v4 []netip.Addr) {
	b := a.As16()
	from := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
		return "NAT64", []netip.Addr{from(12)}
	case netip.MustParsePrefix("::ffff:0:0:0/96").Contains(a):
		return "IPv4-translated", []netip.Addr{from(12)}
	case netip.MustParsePrefix("2002::/16").Contains(a):
		return "6to4", []netip.Addr{from(2)}
	case netip.MustParsePrefix("2001::/32").Contains(a):
		// Teredo: the server address in clear, the client's inverted.
		c := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return "Teredo", []netip.Addr{from(4), netip.AddrFrom4(c)}
	}
	return "", nil
}

// hostAddrs lists the harness host's own addresses at check time, since
// interfaces come and go; a listing error fails closed.
func (p *Proxy) hostAddrs() ([]netip.Addr, error) {
	if p.ifaceAddrs != nil {
		return p.ifaceAddrs()
	}
	list, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(list))
	for _, a := range list {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// blockedAddr names the class of an address no allowlisted name may use,
// or "" when it may be dialed. PermitAddrs exempts what it contains, except
// that the harness host's own (non-loopback) addresses need an entry naming
// exactly that address: permitting a network for an internal mirror must
// not also open every listener on the harness host.
func (p *Proxy) blockedAddr(a netip.Addr, host []netip.Addr) string {
	a = a.Unmap()
	bare := a.WithZone("")
	if !a.IsLoopback() && slices.Contains(host, bare) && !slices.Contains(p.PermitAddrs, netip.PrefixFrom(bare, bare.BitLen())) {
		return "harness interface"
	}
	for _, pfx := range p.PermitAddrs {
		if pfx.Contains(bare) {
			return ""
		}
	}
	if slices.Contains(metadataAddrs, bare) {
		return "cloud metadata"
	}
	if a.Is4() {
		return classOf(v4Special, bare)
	}
	if form, v4 := embedded(bare); form != "" {
		for _, e := range v4 {
			if why := p.blockedAddr(e, host); why != "" {
				return why + " (embedded in " + form + ")"
			}
		}
		return ""
	}
	if why := classOf(v6Special, bare); why != "" {
		return why
	}
	if !globalUnicast.Contains(bare) {
		return "reserved"
	}
	return ""
}

func classOf(table []addrClass, a netip.Addr) string {
	for _, c := range table {
		if c.pfx.Contains(a) {
			return c.name
		}
	}
	return ""
}
