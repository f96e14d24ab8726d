package inbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

const (
	tokenCookie = "sandgate_token"
	csrfCookie  = "sandgate_csrf"
	csrfField   = "csrf"
)

// CSP forbids inline script and style and every other origin.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'"

// CheckAddr refuses to serve on a non-loopback address without a token:
// the inbox shows repository contents and can resume runs.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if isLoopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: set a token (--token or SANDGATE_TOKEN) so only its holders reach the inbox", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// hooks serves the Options.Hooks at their exact paths, POST only, with
// the inbox's headers; everything else goes to the signed-in inbox. The
// path is compared as sent, before any cleaning, so "/hooks/github/../x"
// or "/hooks//github" is the inbox's to refuse.
func (s *Server) hooks(next http.Handler) http.Handler {
	if len(s.opts.Hooks) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := s.opts.Hooks[r.URL.Path]
		if !ok || r.URL.RawPath != "" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// secure wraps every request: headers, authentication, then CSRF checks on
// anything that is not a safe method.
func (s *Server) secure(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		r, ok := s.authenticated(w, r)
		if !ok {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := cop.Check(r); err != nil {
				http.Error(w, "inbox: cross-origin request refused", http.StatusForbidden)
				return
			}
			if !s.csrfValid(r) {
				http.Error(w, "inbox: missing or wrong CSRF token (reload the page)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated says who is asking, or refuses. A trusted proxy's header
// names the person first; then a token (Bearer header, or the cookie the
// ?token= login sets). With neither configured the server only listens on
// loopback, and the Host header must name loopback too, so a
// DNS-rebinding page cannot read the inbox through the browser.
func (s *Server) authenticated(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if name := s.fromProxy(r); name != "" {
		return withPerson(r, name), true
	}
	if !s.tokensSet() {
		if s.proxySet() {
			// Fail closed: a request the proxy did not vouch for has no
			// other way in.
			http.Error(w, "inbox: sign in through the inbox's proxy", http.StatusUnauthorized)
			return r, false
		}
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !isLoopback(host) {
			http.Error(w, "inbox: Host must be a loopback address", http.StatusForbidden)
			return r, false
		}
		return r, true
	}
	if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet {
		name, ok := s.tokenName(q)
		if !ok {
			http.Error(w, "inbox: wrong token", http.StatusUnauthorized)
			return r, false
		}
		// A link from another site must not sign a browser that is
		// someone's out of their name (login CSRF: their decisions
		// would be recorded as the link's maker's); the link still
		// signs in a browser that is no one's yet.
		if !s.replacesSignIn(r, name) {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		u := *r.URL
		v := u.Query()
		v.Del("token")
		u.RawQuery = v.Encode()
		// One leading slash only: "//host" (also spelt /%2F or /\) would
		// be a protocol-relative redirect to another site.
		p := "/" + strings.TrimLeft(u.Path, "/\\")
		http.Redirect(w, r, (&url.URL{Path: p, RawQuery: u.RawQuery}).String(), http.StatusSeeOther)
		return r, false
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		if name, ok := s.tokenName(strings.TrimPrefix(a, "Bearer ")); ok {
			return withPerson(r, name), true
		}
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		if name, ok := s.tokenName(c.Value); ok {
			return withPerson(r, name), true
		}
	}
	http.Error(w, "inbox: token required: open the URL sandgate serve printed, or send Authorization: Bearer", http.StatusUnauthorized)
	return r, false
}

// replacesSignIn reports whether a ?token= login for name came from
// another site into a browser signed in as someone else.
func (s *Server) replacesSignIn(r *http.Request, name string) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "cross-site" && site != "same-site" {
		return false
	}
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return false
	}
	had, ok := s.tokenName(c.Value)
	return ok && had != name
}

// csrfToken returns the form token for this browser, setting the browser's
// random CSRF cookie first if it has none. The form token is an HMAC of
// the cookie under the server's secret: another site can neither read the
// cookie nor compute the token.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(csrfCookie)
	val := ""
	if err == nil && len(c.Value) == 32 {
		val = c.Value
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		val = hex.EncodeToString(b[:])
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: val, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	return s.csrfMAC(val)
}

func (s *Server) csrfMAC(val string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(val))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) csrfValid(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) != 32 {
		return false
	}
	got := r.PostFormValue(csrfField)
	return hmac.Equal([]byte(got), []byte(s.csrfMAC(c.Value)))
}
