package secrets_test

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

// TestAttackStreamRandomCuts: output holding credentials in every
// spelling (one inside another, ones that share an end and a start),
// their beginnings, and token shapes, written to a Stream cut at random
// places (empty writes too) by a writer that scribbles over its buffer
// after each write, is written exactly as the whole output redacts: no
// credential passes a cut, and the bytes the stream reads in place or
// holds back are never the caller's.
func TestAttackStreamRandomCuts(t *testing.T) {
	values := map[string]string{
		"LONG":  "sk-live-0123456789abcdef",
		"INNER": "0123456789ab",
		"QUOTE": `pa"ss\word` + "\n1",
		"TAIL":  "cdef-tok-xyz",
	}
	r := secrets.New(values)
	var pieces []string
	for _, v := range values {
		q := strconv.Quote(v)
		pieces = append(pieces, v, q[1:len(q)-1], v[:len(v)/2], v[len(v)/2:])
	}
	pieces = append(pieces, "ghs_"+strings.Repeat("A1", 20), "ghs_short", "ghs_", "gh", " ", "\n", "plain text ", "0123")
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3000 {
		var text []byte
		for range 1 + rng.IntN(30) {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		want := r.Bytes(bytes.Clone(text))
		var out bytes.Buffer
		w := r.Stream(&out)
		for rest := text; ; {
			n := min(rng.IntN(40), len(rest))
			p := bytes.Clone(rest[:n])
			w.Write(p)
			for i := range p {
				p[i] = '#'
			}
			if rest = rest[n:]; len(rest) == 0 {
				break
			}
		}
		w.Close()
		for _, v := range values {
			if bytes.Contains(out.Bytes(), []byte(v)) {
				t.Fatalf("BREACH: round %d: %q written with a credential in it: %q", round, text, out.String())
			}
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("round %d: %q written as %q, want %q", round, text, out.String(), want)
		}
	}
}
