package secrets_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

type gapper interface{ Gap() error }

// leaked returns a piece of secret, 4 bytes or more, that out holds.
func leaked(out, secret string) (string, bool) {
	for i := 0; i+4 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+4]) {
			return secret[i : i+4], true
		}
	}
	return "", false
}

// TestStreamGapMasksCutCredential: a credential (known, or shaped like a
// token) whose middle a gap took, at every pair of cuts, is not written
// in part on either side of the gap, however what follows the gap is
// cut into writes; the text away from it is written as it is.
func TestStreamGapMasksCutCredential(t *testing.T) {
	const secret = "tok-0a1b2c3d4e5f6a7b"
	token := "ghs_" + strings.Repeat("Zq9", 12)
	r := secrets.New(map[string]string{"API_TOKEN": secret})
	for _, s := range []string{secret, token} {
		for i := 0; i < len(s); i++ {
			for j := i + 1; j <= len(s); j++ {
				for _, step := range []int{1 << 10, 1} {
					var out bytes.Buffer
					w := r.Stream(&out)
					w.Write([]byte("line one\nthe value is " + s[:i]))
					if err := w.(gapper).Gap(); err != nil {
						t.Fatal(err)
					}
					for rest := s[j:] + " then more\nend"; rest != ""; {
						n := min(step, len(rest))
						w.Write([]byte(rest[:n]))
						rest = rest[n:]
					}
					w.Close()
					got := out.String()
					if p, ok := leaked(got, s); ok {
						t.Fatalf("BREACH: cut %d..%d, step %d: %q of the credential written: %q", i, j, step, p, got)
					}
					if !strings.HasPrefix(got, "line one\nthe value is ") || !strings.HasSuffix(got, " then more\nend") {
						t.Fatalf("cut %d..%d, step %d: text away from the gap lost: %q", i, j, step, got)
					}
				}
			}
		}
	}
}

// TestStreamGapLeavesPlainText: a gap between lines of text with no
// credential in reach changes nothing, and with nothing held back a gap
// writes nothing.
func TestStreamGapLeavesPlainText(t *testing.T) {
	r := secrets.New(map[string]string{"API_TOKEN": "tok-0a1b2c3d4e5f6a7b"})
	var out bytes.Buffer
	w := r.Stream(&out)
	w.Write([]byte("first line, long enough to be written now\n"))
	w.(gapper).Gap()
	w.Write([]byte("\nsecond line\n"))
	w.(gapper).Gap()
	w.(gapper).Gap()
	w.Write([]byte("; third\n"))
	w.Close()
	if want := "first line, long enough to be written now\n\nsecond line\n; third\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	(*secrets.Redactor)(nil).Stream(&out).(gapper).Gap()
	if out.Len() != 0 {
		t.Fatalf("a nil redactor's gap wrote %q", out.String())
	}
}
