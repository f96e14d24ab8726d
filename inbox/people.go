package inbox

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"unicode"
)

// People say who is making a request, so every answer and decision is
// recorded under a person's name rather than the server's. Two sources,
// both optional: named tokens (a token file), and a header set by a
// trusted reverse proxy that has already signed the person in (an SSO
// proxy such as oauth2-proxy). The header is believed only from the
// proxies' addresses: from anywhere else it is an attacker's claim.
//
// OIDC in the inbox itself is future work; it would be a third source
// giving a name the same way, so nothing after identify changes.
type People struct {
	// Tokens maps each token to the name of its holder.
	Tokens map[string]string
	// ProxyHeader is the header naming the person (X-Forwarded-User),
	// honoured only on requests from a TrustedProxies address.
	ProxyHeader    string
	TrustedProxies []netip.Prefix
}

// LoadTokens reads a token file: one "TOKEN NAME" per line (the name is
// the rest of the line), blank lines and # comments skipped. Every bad
// line is reported as file:line: problem. A file another account may
// read or write is refused, as ssh refuses such a key: reading it signs
// that account in as anyone in it, writing it adds a person.
func LoadTokens(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: mode %04o lets other accounts read or change the tokens: chmod 600 it", path, perm)
	}
	out := map[string]string{}
	var errs []error
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok, name, _ := strings.Cut(line, " ")
		name = strings.TrimSpace(name)
		switch {
		case len(tok) < 16:
			errs = append(errs, fmt.Errorf("%s:%d: token: shorter than 16 characters (guessable)", path, n))
		case !validPerson(name):
			errs = append(errs, fmt.Errorf("%s:%d: name: missing, longer than 100 characters, or with control or bidirectional characters", path, n))
		case out[tok] != "":
			errs = append(errs, fmt.Errorf("%s:%d: token: given twice (also to %s)", path, n, out[tok]))
		default:
			out[tok] = name
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", path, err))
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no tokens", path))
	}
	return out, errors.Join(errs...)
}

// ParseProxies parses --trusted-proxy values: addresses or CIDR prefixes.
func ParseProxies(vals []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var errs []error
	for _, v := range vals {
		if p, err := netip.ParsePrefix(v); err == nil {
			if p.Bits() < minProxyBits(p.Addr()) {
				errs = append(errs, fmt.Errorf("--trusted-proxy %q: believes the person header from a whole /%d of the internet (anyone there could sign in as anyone); name the proxy's own address or subnet", v, p.Bits()))
				continue
			}
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(v); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else {
			errs = append(errs, fmt.Errorf("--trusted-proxy %q: neither an address nor a CIDR prefix", v))
		}
	}
	return out, errors.Join(errs...)
}

// minProxyBits is the widest prefix believed to hold only proxies: a /8
// (IPv4) or /16 (IPv6) covers a private network; anything wider, such as
// 0.0.0.0/0, is a mistake that hands every client the header.
func minProxyBits(a netip.Addr) int {
	if a.Unmap().Is4() {
		return 8
	}
	return 16
}

// validPerson refuses a name a page or terminal would show other than it
// reads: control characters, and bidirectional controls (an override
// makes "eve\u202enimda" display as "eveadmin").
func validPerson(name string) bool {
	odd := func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
	return name != "" && len(name) <= 100 && strings.IndexFunc(name, odd) < 0
}

type personKey struct{}

// person is who made the request, as identify found.
func (s *Server) person(r *http.Request) string {
	if p, ok := r.Context().Value(personKey{}).(string); ok && p != "" {
		return p
	}
	return s.opts.By
}

func withPerson(r *http.Request, name string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), personKey{}, name))
}

// fromProxy returns the name a trusted proxy put in the header, or "" when
// the request did not come from a trusted proxy or names no one.
func (s *Server) fromProxy(r *http.Request) string {
	p := s.opts.People
	if p == nil || p.ProxyHeader == "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	addr := ap.Addr().Unmap()
	for _, pre := range p.TrustedProxies {
		if !pre.Contains(addr) {
			continue
		}
		// Exactly one value: a proxy that adds its header to the
		// client's leaves the client's first, and Get would believe it.
		vals := r.Header.Values(p.ProxyHeader)
		if name := strings.TrimSpace(strings.Join(vals, "")); len(vals) == 1 && validPerson(name) {
			return name
		}
		return ""
	}
	return ""
}

// tokenName returns the name of got's holder: the --token holder is the
// server's By; a token file's holders are named there.
func (s *Server) tokenName(got string) (string, bool) {
	if s.opts.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1 {
		return s.opts.By, true
	}
	if s.opts.People == nil {
		return "", false
	}
	// Compare hashes: equal length, so the loop's timing says nothing of
	// how much of a token matched.
	h := sha256.Sum256([]byte(got))
	name, ok := "", false
	for tok, n := range s.opts.People.Tokens {
		t := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(h[:], t[:]) == 1 {
			name, ok = n, true
		}
	}
	return name, ok
}

// tokensSet says whether any token is configured.
func (s *Server) tokensSet() bool {
	return s.opts.Token != "" || (s.opts.People != nil && len(s.opts.People.Tokens) > 0)
}

// proxySet says whether a trusted proxy header is configured.
func (s *Server) proxySet() bool {
	return s.opts.People != nil && s.opts.People.ProxyHeader != "" && len(s.opts.People.TrustedProxies) > 0
}
