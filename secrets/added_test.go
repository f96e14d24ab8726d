package secrets_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

// TestRedactorAddLater: a value added after the writers were made (a
// token minted mid-run) is redacted by each of them from then on.
func TestRedactorAddLater(t *testing.T) {
	const tok = "minted-9f8e7d6c5b4a3210"
	r := secrets.New(nil)
	var plain, streamed bytes.Buffer
	w, s := r.Writer(&plain), r.Stream(&streamed)
	r.Add("github_app token", tok)
	line := "remote: refused for x-access-token:" + tok + "\n"
	w.Write([]byte(line))
	s.Write([]byte(line[:20]))
	s.Write([]byte(line[20:]))
	s.Close()
	for name, got := range map[string]string{"String": r.String(line), "Writer": plain.String(), "Stream": streamed.String(),
		"JSON": string(r.JSON([]byte(`{"err":"` + tok + `"}`)))} {
		if strings.Contains(got, tok) || !strings.Contains(got, "[redacted github_app token]") {
			t.Errorf("%s: %q", name, got)
		}
	}
	if n, ok := r.Find([]byte(line)); !ok || n != "github_app token" {
		t.Errorf("Find: %q %v", n, ok)
	}
}

// TestInstallationTokenShape: an installation token the redactor was
// never told about (GitHub's classic 40-character form and the stateless
// ghs_APPID_JWT form) is redacted by its shape, in every writer, also cut
// across writes at every point; short ghs_ words are left alone.
func TestInstallationTokenShape(t *testing.T) {
	classic := "ghs_" + strings.Repeat("Ab9", 12)
	stateless := "ghs_4242_eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MjQyIn0.c2lnbmF0dXJlLWJ5dGVz-_x"
	r := secrets.New(map[string]string{"OTHER_TOKEN": "unrelated-value"})
	for _, tok := range []string{classic, stateless} {
		text := "fatal: https://x-access-token:" + tok + "@github.com/acme/calc.git: denied; ghs_test stays\n"
		got := r.String(text)
		if strings.Contains(got, tok[4:]) || !strings.Contains(got, "[redacted GitHub installation token]@github.com") || !strings.Contains(got, "ghs_test stays") {
			t.Fatalf("String: %q", got)
		}
		for cut := 0; cut <= len(text); cut++ {
			var out bytes.Buffer
			s := r.Stream(&out)
			s.Write([]byte(text[:cut]))
			s.Write([]byte(text[cut:]))
			s.Close()
			if out.String() != got {
				t.Fatalf("cut %d: %q, want %q", cut, out.String(), got)
			}
		}
		if j := string(r.JSON([]byte(`{"a":"` + tok + `"}`))); strings.Contains(j, tok) {
			t.Fatalf("JSON: %s", j)
		}
	}
}
