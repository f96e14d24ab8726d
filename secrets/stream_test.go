package secrets_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

// TestStreamRedactsAcrossWrites: a credential cut into pieces by the
// writes (every cut of it, and one byte at a time) never reaches the
// destination, and everything else does, in order, once closed.
func TestStreamRedactsAcrossWrites(t *testing.T) {
	const secret = "tok-9f8e7d6c5b4a"
	r := secrets.New(map[string]string{"API_TOKEN": secret})
	text := "line one\nthe token is " + secret + " and again " + secret + "\nend"
	want := string(r.Bytes([]byte(text)))
	if strings.Contains(want, secret) {
		t.Fatal("Bytes did not redact")
	}
	for cut := 0; cut <= len(text); cut++ {
		var out bytes.Buffer
		w := r.Stream(&out)
		w.Write([]byte(text[:cut]))
		if strings.Contains(out.String(), "tok-") && !strings.Contains(out.String(), "[redacted") {
			t.Fatalf("cut %d: a piece of the token was written before the rest: %q", cut, out.String())
		}
		w.Write([]byte(text[cut:]))
		w.Close()
		if out.String() != want {
			t.Fatalf("cut %d: %q, want %q", cut, out.String(), want)
		}
	}
	var out bytes.Buffer
	w := r.Stream(&out)
	for i := range len(text) {
		w.Write([]byte{text[i]})
		if strings.Contains(out.String(), secret[:6]) {
			t.Fatalf("byte %d: the token's start was written: %q", i, out.String())
		}
	}
	w.Close()
	if out.String() != want {
		t.Fatalf("byte by byte: %q, want %q", out.String(), want)
	}
	// Without credentials nothing is held back.
	out.Reset()
	(*secrets.Redactor)(nil).Stream(&out).Write([]byte("abc"))
	if out.String() != "abc" {
		t.Fatalf("nil redactor held back: %q", out.String())
	}
}

// TestStreamKeepsNoCallerBytes: the bytes a stream holds back are its own
// copy: a caller that reuses its buffer after Write (as io.Writer lets it)
// changes nothing that is written later.
func TestStreamKeepsNoCallerBytes(t *testing.T) {
	const secret = "tok-9f8e7d6c5b4a"
	r := secrets.New(map[string]string{"API_TOKEN": secret})
	for _, text := range []string{"plain output " + secret[:5], secret[:3], "no credential here at all"} {
		var out bytes.Buffer
		w := r.Stream(&out)
		p := []byte(text)
		w.Write(p)
		for i := range p {
			p[i] = '#'
		}
		w.Close()
		if want := string(r.Bytes([]byte(text))); out.String() != want {
			t.Fatalf("%q: wrote %q, want %q", text, out.String(), want)
		}
	}
}
