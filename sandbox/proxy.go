package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Alert is raised by the proxy, not the agent, for requests that are
// almost never legitimate in a coding task, and for every denial.
type Alert struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Target string    `json:"target"`
	Reason string    `json:"reason"`
	Denied bool      `json:"denied"`
}

// Proxy is the harness-side egress proxy: the only way out of a box in
// allowlist mode. It serves HTTP CONNECT and absolute-form HTTP requests on
// a unix socket bound into the box.
type Proxy struct {
	// Allow lists host patterns: "example.com", "*.example.com" (any
	// subdomain) or "example.com:8443". Without a port, 80 and 443 pass.
	Allow []string
	// PermitAddrs exempts address ranges from the block on loopback,
	// private, link-local and metadata addresses (an internal mirror).
	PermitAddrs []netip.Prefix
	// Resolve looks names up (default: the system resolver). Every
	// resolved address is checked, and the connection goes to the checked
	// address, so a name cannot be re-resolved somewhere else.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// AuditLog receives one squid-format line per decision.
	AuditLog io.Writer
	// OnAlert is called for every alert.
	OnAlert func(Alert)

	ln   net.Listener
	mu   sync.Mutex
	wg   sync.WaitGroup
	done chan struct{}
}

// Listen starts serving on a unix socket at path.
func (p *Proxy) Listen(path string) error {
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	p.ln, p.done = ln, make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.serve(c) }()
		}
	}()
	return nil
}

// Close stops the proxy and waits for open tunnels to end.
func (p *Proxy) Close() error {
	if p.ln == nil {
		return nil
	}
	close(p.done)
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	start := time.Now()
	if req.Method == http.MethodConnect {
		p.tunnel(c, br, req, start)
		return
	}
	p.forward(c, req, start)
}

// decide checks a target against the allowlist and the address policy and
// returns the address to dial.
func (p *Proxy) decide(ctx context.Context, hostport string, defaultPort string) (netip.AddrPort, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if !p.allowed(host, port) {
		return netip.AddrPort{}, "host not in allowlist"
	}
	resolve := p.Resolve
	if resolve == nil {
		resolve = func(ctx context.Context, h string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		}
	}
	addrs, err := resolve(ctx, host)
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, "name does not resolve"
	}
	for _, a := range addrs {
		if why := p.blockedAddr(a.Unmap()); why != "" {
			return netip.AddrPort{}, fmt.Sprintf("%s resolves to %s address %s", host, why, a)
		}
	}
	n, _ := strconv.Atoi(port)
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(n)), ""
}

func (p *Proxy) allowed(host, port string) bool {
	for _, pat := range p.Allow {
		ph, pp, err := net.SplitHostPort(pat)
		if err != nil {
			ph, pp = pat, ""
		}
		ph = strings.ToLower(ph)
		if pp == "" && port != "443" && port != "80" || pp != "" && pp != port {
			continue
		}
		if ph == host || strings.HasPrefix(ph, "*.") && strings.HasSuffix(host, ph[1:]) {
			return true
		}
	}
	return false
}

var metadataAddrs = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}

// blockedAddr names the class of an address no allowlisted name may use.
func (p *Proxy) blockedAddr(a netip.Addr) string {
	for _, pfx := range p.PermitAddrs {
		if pfx.Contains(a) {
			return ""
		}
	}
	for _, m := range metadataAddrs {
		if a == m {
			return "cloud metadata"
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate(), netip.MustParsePrefix("100.64.0.0/10").Contains(a):
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified(), a.IsMulticast():
		return "unroutable"
	}
	return ""
}

func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request, start time.Time) {
	target := req.Host
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	dst, why := p.decide(ctx, target, "443")
	if why != "" {
		p.deny(c, "CONNECT", target, why, start)
		return
	}
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", dst.String())
	if err != nil {
		p.deny(c, "CONNECT", target, "upstream unreachable", start)
		return
	}
	defer up.Close()
	fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	p.alertIfSuspicious("CONNECT", target, "")
	var n int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, br)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	n, _ = io.Copy(c, up)
	_ = c.Close()
	wg.Wait()
	p.audit(start, "TCP_TUNNEL/200", n, "CONNECT", target, "HIER_DIRECT/"+dst.Addr().String(), "-")
}

func (p *Proxy) forward(c net.Conn, req *http.Request, start time.Time) {
	if req.URL.Host == "" || req.URL.Scheme != "http" {
		p.deny(c, req.Method, req.URL.String(), "only absolute http:// URLs and CONNECT are proxied", start)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dst, why := p.decide(ctx, req.URL.Host, "80")
	if why != "" {
		p.deny(c, req.Method, req.URL.String(), why, start)
		return
	}
	p.alertIfSuspicious(req.Method, req.URL.Host, req.URL.Path)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", dst.String())
	}}
	defer tr.CloseIdleConnections()
	out := req.Clone(ctx)
	out.RequestURI, out.Host = "", req.URL.Host
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	resp, err := tr.RoundTrip(out)
	if err != nil {
		p.deny(c, req.Method, req.URL.String(), "upstream unreachable", start)
		return
	}
	defer resp.Body.Close()
	cw := &countWriter{w: c}
	_ = resp.Write(cw)
	p.audit(start, fmt.Sprintf("TCP_MISS/%d", resp.StatusCode), cw.n, req.Method, req.URL.String(),
		"HIER_DIRECT/"+dst.Addr().String(), orDash(resp.Header.Get("Content-Type")))
}

func (p *Proxy) deny(c net.Conn, method, target, why string, start time.Time) {
	body := "sandgate: egress denied: " + why + "\n"
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nX-Sandgate-Deny: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", why, len(body), body)
	p.audit(start, "TCP_DENIED/403", 0, method, target, "HIER_NONE/-", "-")
	p.alert(Alert{Time: time.Now().UTC(), Method: method, Target: target, Reason: why, Denied: true})
}

// suspicious are endpoints a coding task almost never needs: sign-ups,
// OAuth and token endpoints, mail and chat APIs.
var suspicious = []string{"oauth", "/token", "signup", "sign-up", "/register", "accounts.google.com", "login.microsoftonline.com",
	"api.sendgrid.com", "api.mailgun.net", "smtp.", "api.slack.com", "hooks.slack.com", "discord.com", "discordapp.com", "api.telegram.org"}

func (p *Proxy) alertIfSuspicious(method, host, path string) {
	target := strings.ToLower(host + path)
	for _, s := range suspicious {
		if strings.Contains(target, s) {
			p.alert(Alert{Time: time.Now().UTC(), Method: method, Target: host + path, Reason: "request to a sign-up, token, mail or chat endpoint (" + s + ")"})
			return
		}
	}
}

func (p *Proxy) alert(a Alert) {
	if p.OnAlert != nil {
		p.OnAlert(a)
	}
}

// audit writes a squid native log line: time elapsed client code/status
// bytes method URL user hierarchy/peer type.
func (p *Proxy) audit(start time.Time, code string, n int64, method, url, hier, typ string) {
	if p.AuditLog == nil {
		return
	}
	now := time.Now()
	line := fmt.Sprintf("%d.%03d %d sandbox %s %d %s %s - %s %s\n", now.Unix(), now.Nanosecond()/1e6,
		now.Sub(start).Milliseconds(), code, n, method, url, hier, typ)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.AuditLog, line)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
