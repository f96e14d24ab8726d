package secrets

import (
	"bytes"
	"regexp"
	"strings"
)

// patternMarker replaces a credential found by its shape rather than its
// value.
const patternMarker = "[redacted GitHub installation token]"

// installationTokenRE is a GitHub App installation token: ghs_ then 36
// letters and digits, or the stateless format GitHub began minting in
// 2026 (ghs_APPID_JWT: longer, with the JWT's '-', '_' and '.'). It is
// matched by shape because a token the harness did not mint itself (one
// an operator's tool handed over, one minted by a harness that died)
// has no value to match.
var installationTokenRE = regexp.MustCompile(`ghs_[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*`)

// patternMin is the shortest body after ghs_ taken for a token: shorter
// ones are words (ghs_test), not credentials.
const patternMin = 30

// patternMax bounds how much a Stream holds back for a token that may go
// on in the next write: a longer one is masked as it goes on (long.go).
const patternMax = 4096

func patterns(s string) string {
	if !strings.Contains(s, "ghs_") {
		return s
	}
	return installationTokenRE.ReplaceAllStringFunc(s, func(m string) string {
		if len(m)-4 < patternMin {
			return m
		}
		return patternMarker
	})
}

func hasPattern(b []byte) bool {
	if !bytes.Contains(b, []byte("ghs_")) {
		return false
	}
	for _, m := range installationTokenRE.FindAll(b, -1) {
		if len(m)-4 >= patternMin {
			return true
		}
	}
	return false
}

// patternCut is where a Stream must stop writing buf, at most cut, so
// that a token shape is written only whole: the start of a shape that
// crosses cut or reaches buf's end (it may go on in the next write), or
// of a partial "ghs_" at the very end.
func patternCut(buf []byte, cut int) int {
	for k := 1; k <= 3 && k <= len(buf); k++ {
		if bytes.HasPrefix([]byte("ghs_"), buf[len(buf)-k:]) && len(buf)-k < cut {
			cut = len(buf) - k
		}
	}
	from := max(cut-patternMax, 0)
	for {
		i := bytes.Index(buf[from:min(cut+3, len(buf))], []byte("ghs_"))
		if i < 0 || from+i >= cut {
			return cut
		}
		i += from
		end := i + 4
		for end < len(buf) && tokenByte(buf[end]) {
			end++
		}
		if end > cut || end == len(buf) {
			return i
		}
		from = end
	}
}

func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
