// Package secrets is the harness's credentials policy in one small place:
// which environment variable names hold credentials, and a redactor that
// removes their values from everything the harness writes.
//
// It imports nothing of sandgate's, so the blueprint validator, the runtime,
// the nodes and the CLI can all share it without bending import direction.
package secrets

import (
	"net"
	"net/url"
	"path"
	"strings"
)

// exactParts are word parts that mark a credential only when they are the
// whole part: "KEY" in GPG_KEY or API_KEY, but not MONKEY or KEYBOARD.
var exactParts = map[string]bool{
	"KEY": true, "KEYS": true, "PASS": true, "PAT": true,
	"APIKEY": true, "ACCESSKEY": true, "PRIVATEKEY": true, "SECRETKEY": true, "AUTHKEY": true,
}

// suffixParts mark a credential when a word part ends with them, so
// GHTOKEN and PGPASSWORD count. None of them ends an ordinary English word
// used in variable names, unlike KEY (MONKEY, TURKEY).
var suffixParts = []string{"TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"}

// IsCredentialName reports whether an environment variable name looks like
// it holds a credential. The name is split into word parts at every
// character that is not a letter or digit (GITHUB_TOKEN → GITHUB, TOKEN) and
// compared case-insensitively:
//
//   - a part ending in TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL(S)
//     marks a credential (FOO_TOKEN, GHTOKEN, AWS_SECRET_ACCESS_KEY,
//     PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS);
//   - KEY, KEYS, PASS and PAT mark one only as a whole part (OPENAI_API_KEY,
//     DB_PASS), as do APIKEY, ACCESSKEY, PRIVATEKEY, SECRETKEY and AUTHKEY.
//
// So MONKEY, KEYBOARD_LAYOUT, TOKENIZERS_PARALLELISM and PASSAGE are not
// credentials. Some harmless names are (GPG_KEY_ID, SORT_KEY): the operator
// passes those with --allow-env. Erring this way keeps a real credential
// from slipping into the box under an unusual name.
func IsCredentialName(name string) bool {
	for _, part := range strings.FieldsFunc(strings.ToUpper(name), notAlnum) {
		if exactParts[part] {
			return true
		}
		for _, s := range suffixParts {
			if strings.HasSuffix(part, s) {
				return true
			}
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// EndpointAllowed reports whether a credential may be sent to rawURL
// under one of the allowed URL prefixes. Both are parsed as URLs, never
// compared as strings, so https://github.com@evil.example/ is a request to
// evil.example and matches no allowance of github.com. rawURL matches an
// allowance when it is an http or https URL with the same scheme and host
// (a port written as the scheme's default counts as absent) and its
// cleaned path is the allowance's path or below it by whole segments: an
// operator who allows https://llm.internal/v1 has allowed
// https://llm.internal/v1/ and https://llm.internal/v1/x, not
// https://llm.internal/v1evil, https://llm.internal/v1/../admin or
// http://llm.internal/v1. An allowance with an empty path covers its host.
func EndpointAllowed(rawURL string, allowed []string) bool {
	u, ok := parseEndpoint(rawURL)
	if !ok {
		return false
	}
	for _, a := range allowed {
		if au, ok := parseEndpoint(a); ok && au.scheme == u.scheme && au.host == u.host && underPath(u.path, au.path) {
			return true
		}
	}
	return false
}

// IsHTTPURL reports whether s is an http or https URL with a host: the only
// kind of place the harness sends a token. A local path, a file:// URL or
// an ssh remote is not.
func IsHTTPURL(s string) bool {
	_, ok := parseEndpoint(s)
	return ok
}

type endpoint struct{ scheme, host, path string }

func parseEndpoint(s string) (endpoint, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return endpoint{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return endpoint{}, false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return endpoint{}, false
	}
	if port == map[string]string{"http": "80", "https": "443"}[scheme] {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return endpoint{scheme, host, path.Clean("/" + u.Path)}, true
}

// underPath reports whether p is base or below it by whole segments.
func underPath(p, base string) bool {
	base = strings.TrimSuffix(base, "/")
	return p == base || strings.HasPrefix(p, base+"/")
}
