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
	// PermitAddrs exempts address ranges from the block on special-purpose
	// addresses (loopback, private, link-local, documentation, ...; see
	// blockedAddr), e.g. for an internal mirror. An address of the harness
	// host itself is exempted only by an entry naming exactly it (/32, /128).
	PermitAddrs []netip.Prefix
	// Resolve looks names up (default: the system resolver). Every
	// resolved address is checked, and the connection goes to the checked
	// address, so a name cannot be re-resolved somewhere else.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// AuditLog receives one squid-format line per decision.
	AuditLog io.Writer
	// OnAlert is called for every alert, one call at a time: the box's
	// commands are refused at once on several connections, and a callback
	// writing to a terminal or a log need not lock.
	OnAlert func(Alert)

	// dial and ifaceAddrs replace the dialer and net.InterfaceAddrs in
	// tests, so refusals can be shown to happen before any dial.
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	ifaceAddrs func() ([]netip.Addr, error)

	ln        net.Listener
	mu        sync.Mutex // the audit log's
	alertMu   sync.Mutex // OnAlert's
	wg        sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once
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

// Close stops the proxy and waits for open tunnels to end. Closing twice
// is harmless.
func (p *Proxy) Close() error {
	if p.ln == nil {
		return nil
	}
	var err error
	p.closeOnce.Do(func() {
		close(p.done)
		err = p.ln.Close()
	})
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
// returns the address to dial: an IP literal is checked as itself, a name
// by every address it resolves to, and the dial goes to the checked
// address so a second lookup cannot rebind the name elsewhere.
func (p *Proxy) decide(ctx context.Context, hostport string, defaultPort string) (netip.AddrPort, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), "."))
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return netip.AddrPort{}, "bad port"
	}
	if !p.allowed(host, port) {
		return netip.AddrPort{}, "host not in allowlist"
	}
	mine, err := p.hostAddrs()
	if err != nil {
		return netip.AddrPort{}, "cannot list the harness host's addresses"
	}
	if lit, err := netip.ParseAddr(host); err == nil {
		if why := p.blockedAddr(lit, mine); why != "" {
			return netip.AddrPort{}, fmt.Sprintf("%s is a %s address", lit, why)
		}
		return netip.AddrPortFrom(lit.Unmap(), uint16(n)), ""
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, "name does not resolve"
	}
	for _, a := range addrs {
		if why := p.blockedAddr(a, mine); why != "" {
			return netip.AddrPort{}, fmt.Sprintf("%s resolves to %s address %s", host, why, a)
		}
	}
	return netip.AddrPortFrom(addrs[0].Unmap(), uint16(n)), ""
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if p.Resolve != nil {
		return p.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// dialTo connects to an address decide checked.
func (p *Proxy) dialTo(ctx context.Context, dst netip.AddrPort) (net.Conn, error) {
	if p.dial != nil {
		return p.dial(ctx, "tcp", dst.String())
	}
	return (&net.Dialer{}).DialContext(ctx, "tcp", dst.String())
}

func (p *Proxy) allowed(host, port string) bool {
	for _, pat := range p.Allow {
		ph, pp, err := net.SplitHostPort(pat)
		if err != nil {
			ph, pp = pat, ""
		}
		ph = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(ph, "["), "]"), "."))
		if pp == "" && port != "443" && port != "80" || pp != "" && pp != port {
			continue
		}
		if ph == host || strings.HasPrefix(ph, "*.") && strings.HasSuffix(host, ph[1:]) {
			return true
		}
	}
	return false
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
	up, err := p.dialTo(ctx, dst)
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
		return p.dialTo(ctx, dst)
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

// deny answers 403 and logs the reason; the audit line carries it as a
// quoted field after squid's own, so squid parsers still read the rest.
func (p *Proxy) deny(c net.Conn, method, target, why string, start time.Time) {
	why = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?' // the reason may quote a request; keep it one header line
		}
		return r
	}, why)
	body := "sandgate: egress denied: " + why + "\n"
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nX-Sandgate-Deny: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", why, len(body), body)
	p.audit(start, "TCP_DENIED/403", 0, method, target, "HIER_NONE/-", "- "+strconv.Quote(why))
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
		p.alertMu.Lock()
		defer p.alertMu.Unlock()
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
