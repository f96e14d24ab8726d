//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestEgressProxyAllowlist(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	loop := netip.MustParseAddr("127.0.0.1")
	var audit syncBuf
	var mu sync.Mutex
	var alerts []sandbox.Alert
	newProxy := func() *sandbox.Proxy {
		return &sandbox.Proxy{
			Allow:       []string{fmt.Sprintf("allowed.test:%d", port), fmt.Sprintf("rebind.test:%d", port)},
			PermitAddrs: nil,
			Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
				if host == "rebind.test" {
					return []netip.Addr{loop}, nil // an allowed name pointing at the host
				}
				return []netip.Addr{loop}, nil
			},
			AuditLog: &audit,
			OnAlert:  func(a sandbox.Alert) { mu.Lock(); alerts = append(alerts, a); mu.Unlock() },
		}
	}
	// The first proxy exempts loopback so the test server is reachable;
	// the second blocks it, as in production.
	state := t.TempDir()
	sock := filepath.Join(state, "proxy.sock")
	permitting := newProxy()
	permitting.PermitAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	permitting.Allow = []string{fmt.Sprintf("allowed.test:%d", port)}
	if err := permitting.Listen(sock); err != nil {
		t.Fatal(err)
	}
	defer permitting.Close()
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: filepath.Join(state, "box"), ProxySocket: sock,
		Policy: sandbox.Policy{Network: sandbox.NetworkAllowlist, AllowHosts: permitting.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	res := sh(t, b, fmt.Sprintf("curl -sf http://allowed.test:%d/ok && echo && curl -sf --proxytunnel http://allowed.test:%d/tunnel", port, port))
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "hello from allowed.test:"+fmt.Sprint(port)+"/ok") || !strings.Contains(string(res.Output), "/tunnel") {
		t.Fatalf("allowlisted host unreachable through the proxy: exit %d\n%s", res.ExitCode, res.Output)
	}
	for what, script := range map[string]string{
		"a host not on the allowlist":     fmt.Sprintf("curl -sf http://evil.test:%d/", port),
		"CONNECT to a host not allowed":   fmt.Sprintf("curl -sf --proxytunnel http://evil.test:%d/", port),
		"an allowed host on another port": "curl -sf http://allowed.test:1/",
		"an IP literal":                   fmt.Sprintf("curl -sf http://127.0.0.1:%d/", port),
		"bypassing the proxy":             fmt.Sprintf("curl -sf --noproxy '*' -m 3 http://127.0.0.1:%d/", port),
		"https to a host not allowed":     "curl -sf -m 5 https://proxy.golang.org/",
	} {
		mustFail(t, b, what, script)
	}
	sh(t, b, fmt.Sprintf("curl -s http://allowed.test:%d/login/oauth/access_token >/dev/null", port))
	log := audit.String()
	for _, want := range []string{"TCP_MISS/200", "TCP_TUNNEL/200", fmt.Sprintf("TCP_DENIED/403 0 GET http://evil.test:%d/ - HIER_NONE/- -", port), "CONNECT evil.test:"} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %q:\n%s", want, log)
		}
	}
	mu.Lock()
	var denied, suspicious int
	for _, a := range alerts {
		if a.Denied {
			denied++
		} else if strings.Contains(a.Target, "oauth") {
			suspicious++
		}
	}
	if denied < 4 || suspicious != 1 {
		t.Errorf("alerts: %d denied, %d suspicious: %+v", denied, suspicious, alerts)
	}
	mu.Unlock()

	// An allowlisted name that resolves to loopback is refused when no
	// exemption covers it.
	strict := newProxy()
	attacks := []string{fmt.Sprintf("http://rebind.test:%d/", port), fmt.Sprintf("http://127.0.0.1:%d/", port), fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port)}
	for _, a := range hostAddrs(t) {
		attacks = append(attacks, "http://"+net.JoinHostPort(a.String(), fmt.Sprint(port))+"/")
	}
	for _, u := range attacks[1:] {
		strict.Allow = append(strict.Allow, strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/"))
	}
	sandbox.SetProxyHooks(strict, func(_ context.Context, _, addr string) (net.Conn, error) {
		t.Errorf("BREACH: the strict proxy dialed %s", addr)
		return nil, fmt.Errorf("test dialer: refused")
	}, nil)
	sock2 := filepath.Join(state, "strict.sock")
	if err := strict.Listen(sock2); err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	b2, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: filepath.Join(state, "box2"), ProxySocket: sock2,
		Policy: sandbox.Policy{Network: sandbox.NetworkAllowlist, AllowHosts: strict.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	// From inside the box, allowlisted names and literals that lead to the
	// harness host (loopback, IPv4-mapped loopback, its interface
	// addresses), by plain request and by CONNECT, are refused.
	for _, u := range attacks {
		for _, tunnel := range []string{"", "--proxytunnel "} {
			res = sh(t, b2, "curl -s -i -g --noproxy '' "+tunnel+u)
			if !strings.Contains(string(res.Output), "403") || !strings.Contains(string(res.Output), "X-Sandgate-Deny: ") || strings.Contains(string(res.Output), "hello from") {
				t.Errorf("BREACH: %scurl %s from the box was not refused:\n%s", tunnel, u, res.Output)
			}
		}
	}
}

// hostAddrs lists this machine's non-loopback interface addresses.
func hostAddrs(t *testing.T) []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, ia := range ifs {
		if n, ok := ia.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok && !a.Unmap().IsLoopback() && !a.IsLinkLocalUnicast() {
				out = append(out, a.Unmap())
			}
		}
	}
	return out
}
