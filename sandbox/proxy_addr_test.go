//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// loopServer is a loopback HTTP server that counts the connections it
// accepts, so a test can tell a refused target was never reached.
type loopServer struct {
	*httptest.Server
	port  int
	conns atomic.Int32
}

func newLoopServer(t *testing.T) *loopServer {
	s := &loopServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "reached the loopback listener")
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	s.port = s.Listener.Addr().(*net.TCPAddr).Port
	return s
}

// proxyExchange sends one raw request to the proxy and returns the
// response, with the body of a tunnel's inner request when it opens.
func proxyExchange(t *testing.T, sock, raw string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("proxy answer to %q: %v", raw, err)
	}
	if !strings.HasPrefix(raw, "CONNECT") || resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	fmt.Fprint(c, "GET /inner HTTP/1.1\r\nHost: inner\r\nConnection: close\r\n\r\n")
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("tunnel: %v", err)
	}
	b, _ := io.ReadAll(inner.Body)
	return resp, string(b)
}

type addrCase struct {
	name    string
	method  string // CONNECT (default) or GET for an absolute-form request
	target  string // host:port; allowlisted by the case
	permit  []string
	resolve []string // what any name resolves to
	deny    string   // the reason's class; "" when the dial must happen
	dialed  string   // the address the dial must go to, when allowed
}

func TestEgressProxyRefusesSpecialAddresses(t *testing.T) {
	srv := newLoopServer(t)
	P := srv.port
	lp := func(h string) string { return net.JoinHostPort(h, fmt.Sprint(P)) }
	cases := []addrCase{
		{name: "loopback literal", target: lp("127.0.0.1"), deny: "loopback"},
		{name: "loopback literal, permitted", target: lp("127.0.0.1"), permit: []string{"127.0.0.0/8"}, dialed: lp("127.0.0.1")},
		{name: "loopback literal, absolute-form GET", method: "GET", target: lp("127.0.0.1"), deny: "loopback"},
		{name: "loopback, absolute-form GET, permitted", method: "GET", target: lp("127.0.0.1"), permit: []string{"127.0.0.0/8"}, dialed: lp("127.0.0.1")},
		{name: "other loopback address", target: lp("127.9.9.9"), deny: "loopback"},
		{name: "IPv6 loopback", target: lp("::1"), deny: "loopback"},
		{name: "name resolving to loopback", target: lp("loop.test"), resolve: []string{"127.0.0.1"}, deny: "resolves to loopback"},
		{name: "one of several resolved addresses", target: lp("mixed.test"), resolve: []string{"2606:4700::1", "127.0.0.1"}, deny: "resolves to loopback"},
		{name: "IPv4-mapped loopback", target: lp("::ffff:127.0.0.1"), deny: "loopback"},
		{name: "IPv4-mapped loopback, absolute-form GET", method: "GET", target: lp("::ffff:127.0.0.1"), deny: "loopback"},
		{name: "IPv4-mapped loopback, permitted", target: lp("::ffff:127.0.0.1"), permit: []string{"127.0.0.0/8"}, dialed: lp("127.0.0.1")},
		{name: "IPv4-mapped documentation", target: "[::ffff:192.0.2.1]:443", deny: "documentation"},
		{name: "name resolving to IPv4-mapped private", target: "mapped.test:443", resolve: []string{"::ffff:10.0.0.1"}, deny: "private"},
		{name: "IPv4-translated private", target: "[::ffff:0:a00:1]:443", deny: "private (embedded in IPv4-translated)"},
		{name: "NAT64 of loopback", target: "[64:ff9b::7f00:1]:443", deny: "loopback (embedded in NAT64)"},
		{name: "NAT64 of a public address", target: "[64:ff9b::102:305]:443", dialed: "[64:ff9b::102:305]:443"},
		{name: "6to4 of private", target: "[2002:c0a8:101::1]:443", deny: "private (embedded in 6to4)"},
		{name: "Teredo client loopback", target: "[2001:0:102:305::80ff:fffe]:443", deny: "loopback (embedded in Teredo)"},
		{name: "documentation 192.0.2/24", target: "192.0.2.1:443", deny: "documentation"},
		{name: "documentation 198.51.100/24", target: "198.51.100.7:443", deny: "documentation"},
		{name: "documentation 203.0.113/24", target: "203.0.113.9:80", deny: "documentation"},
		{name: "documentation absolute-form GET", method: "GET", target: "203.0.113.9:80", deny: "documentation"},
		{name: "documentation 2001:db8::/32", target: "[2001:db8::1]:443", deny: "documentation"},
		{name: "documentation 3fff::/20", target: "[3fff::1]:443", deny: "documentation"},
		{name: "documentation, permitted", target: "192.0.2.1:443", permit: []string{"192.0.2.0/24"}, dialed: "192.0.2.1:443"},
		{name: "private 10/8", target: "10.1.2.3:443", deny: "private"},
		{name: "private 172.16/12", target: "172.31.0.1:443", deny: "private"},
		{name: "private 192.168/16", target: "192.168.0.1:443", deny: "private"},
		{name: "ULA", target: "[fd12::1]:443", deny: "private"},
		{name: "link-local", target: "169.254.1.1:443", deny: "link-local"},
		{name: "IPv6 link-local", target: "[fe80::1]:443", deny: "link-local"},
		{name: "cloud metadata", target: "169.254.169.254:80", deny: "cloud metadata"},
		{name: "CGNAT", target: "100.64.0.1:443", deny: "CGNAT"},
		{name: "benchmarking", target: "198.18.0.1:443", deny: "benchmarking"},
		{name: "IPv6 benchmarking", target: "[2001:2::1]:443", deny: "benchmarking"},
		{name: "multicast", target: "224.0.0.1:443", deny: "multicast"},
		{name: "IPv6 multicast", target: "[ff02::1]:443", deny: "multicast"},
		{name: "reserved 240/4", target: "240.0.0.1:443", deny: "reserved"},
		{name: "broadcast", target: "255.255.255.255:443", deny: "broadcast"},
		{name: "this network 0.0.0.0", target: lp("0.0.0.0"), deny: "this-network"},
		{name: "this network 0/8", target: "0.1.2.3:443", deny: "this-network"},
		{name: "unspecified", target: lp("::"), deny: "unspecified"},
		{name: "IPv4-compatible", target: "[::7f00:1]:443", deny: "reserved"},
		{name: "discard-only", target: "[100::1]:443", deny: "discard-only"},
		{name: "site-local", target: "[fec0::1]:443", deny: "site-local"},
		{name: "harness interface", target: "1.2.3.4:443", deny: "harness interface"},
		{name: "harness interface behind a name", target: "me.test:443", resolve: []string{"1.2.3.4"}, deny: "resolves to harness interface"},
		{name: "harness interface, network permitted", target: "1.2.3.4:443", permit: []string{"1.2.3.0/24"}, deny: "harness interface"},
		{name: "harness interface, named exactly", target: "1.2.3.4:443", permit: []string{"1.2.3.4/32"}, dialed: "1.2.3.4:443"},
		{name: "NAT64 of the harness", target: "[64:ff9b::102:304]:443", deny: "harness interface (embedded in NAT64)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runAddrCase(t, srv, tc) })
	}
}

// runAddrCase allowlists the target and asks for it. The dial hook dials
// loopback for real and refuses everything else without sending a packet.
func runAddrCase(t *testing.T, srv *loopServer, tc addrCase) {
	var audit syncBuf
	var mu sync.Mutex
	var dials []string
	p := &sandbox.Proxy{Allow: []string{tc.target}, AuditLog: &audit,
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if _, err := netip.ParseAddr(host); err == nil {
				t.Errorf("the IP literal %s went to the resolver", host)
			}
			var out []netip.Addr
			for _, a := range tc.resolve {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		}}
	for _, s := range tc.permit {
		p.PermitAddrs = append(p.PermitAddrs, netip.MustParsePrefix(s))
	}
	sandbox.SetProxyHooks(p, func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dials = append(dials, addr)
		mu.Unlock()
		if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().IsLoopback() {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		return nil, errors.New("test dialer: no traffic leaves loopback")
	}, func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1"), netip.MustParseAddr("1.2.3.4")}, nil
	})
	sock := filepath.Join(t.TempDir(), "p.sock")
	if err := p.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before := srv.conns.Load()
	raw := fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", tc.target, tc.target)
	if tc.method == "GET" {
		raw = fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tc.target, tc.target)
	}
	resp, body := proxyExchange(t, sock, raw)
	p.Close() // flush the audit line of a tunnel
	mu.Lock()
	defer mu.Unlock()
	if tc.deny != "" {
		why := resp.Header.Get("X-Sandgate-Deny")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(why, tc.deny) {
			t.Fatalf("BREACH: %s answered %s (deny %q), want 403 naming %q; body %q", tc.target, resp.Status, why, tc.deny, body)
		}
		if len(dials) != 0 || srv.conns.Load() != before {
			t.Fatalf("BREACH: refused target was dialed: %v", dials)
		}
		if !strings.Contains(audit.String(), "TCP_DENIED/403") || !strings.Contains(audit.String(), fmt.Sprintf("%q", why)) {
			t.Fatalf("audit log lacks the denial and its reason %q:\n%s", why, audit.String())
		}
		return
	}
	if len(dials) != 1 || dials[0] != tc.dialed {
		t.Fatalf("dials %v, want exactly %s (the checked address)", dials, tc.dialed)
	}
	if netip.MustParseAddrPort(tc.dialed).Addr().IsLoopback() {
		if resp.StatusCode != http.StatusOK || body != "reached the loopback listener" {
			t.Fatalf("permitted loopback target: %s %q", resp.Status, body)
		}
	} else if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Sandgate-Deny") != "upstream unreachable" {
		t.Fatalf("permitted target: %s %q", resp.Status, resp.Header.Get("X-Sandgate-Deny"))
	}
}

// TestEgressProxyRefusesRealHostAddresses asks for each of this machine's
// own interface addresses, listed by the real net.InterfaceAddrs, under
// a PermitAddrs entry covering the interface's whole network.
func TestEgressProxyRefusesRealHostAddresses(t *testing.T) {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ia := range ifs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		pfx, err := netip.ParsePrefix(n.String())
		if err != nil {
			t.Fatal(err)
		}
		a := pfx.Addr().Unmap()
		if a.IsLoopback() {
			continue // loopback is its own class, permitted by naming 127.0.0.0/8
		}
		target := net.JoinHostPort(a.String(), "443")
		p := &sandbox.Proxy{Allow: []string{target}, PermitAddrs: []netip.Prefix{pfx.Masked()}}
		sandbox.SetProxyHooks(p, func(_ context.Context, _, addr string) (net.Conn, error) {
			t.Errorf("BREACH: the proxy dialed the harness's own address %s", addr)
			return nil, errors.New("test dialer: refused")
		}, nil)
		sock := filepath.Join(t.TempDir(), "p.sock")
		if err := p.Listen(sock); err != nil {
			t.Fatal(err)
		}
		resp, _ := proxyExchange(t, sock, fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target))
		p.Close()
		if why := resp.Header.Get("X-Sandgate-Deny"); resp.StatusCode != http.StatusForbidden || !strings.Contains(why, "harness interface") {
			t.Errorf("BREACH: harness address %s under permit %s: %s (%q)", a, pfx.Masked(), resp.Status, why)
		}
	}
}

// TestEgressProxyPinsTheCheckedAddress rebinds a name after its first
// lookup: the dial must go to the address that was checked.
func TestEgressProxyPinsTheCheckedAddress(t *testing.T) {
	srv := newLoopServer(t)
	target := fmt.Sprintf("rebind.test:%d", srv.port)
	var lookups atomic.Int32
	var dialed []string
	p := &sandbox.Proxy{Allow: []string{target}, PermitAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			if lookups.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		}}
	sandbox.SetProxyHooks(p, func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}, nil)
	sock := filepath.Join(t.TempDir(), "p.sock")
	if err := p.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, raw := range []string{
		fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target),
		fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, target),
	} {
		lookups.Store(0)
		dialed = nil
		resp, body := proxyExchange(t, sock, raw)
		want := fmt.Sprintf("127.0.0.1:%d", srv.port)
		if resp.StatusCode != http.StatusOK || body != "reached the loopback listener" || len(dialed) != 1 || dialed[0] != want || lookups.Load() != 1 {
			t.Fatalf("%q: %s %q, dialed %v after %d lookups; want one lookup and a dial to %s", raw, resp.Status, body, dialed, lookups.Load(), want)
		}
	}
}
