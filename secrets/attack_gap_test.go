package secrets_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/secrets"
)

// gapCase is one attack on a Stream around gaps: text holds whole
// credentials among filler, drops are the [from, to) ranges of text a
// live queue left out (possibly empty: a gap right after another), and
// the visible rest is written in cuts.
type gapCase struct {
	values map[string]string
	tokens []string // the token shapes' bodies
	text   string
	drops  [][2]int
}

// secretAlpha and fillAlpha share no byte, nor does fillAlpha with any
// spelling of a value made of secretAlpha ('n', 'u', 'x', '\\' are kept
// out of the filler), so a 4-byte window of the output holding a filler
// byte is never a piece of a credential.
const (
	secretAlpha = "0123456789QWXZ"
	fillAlpha   = " ,;hijk"
)

func randSecret(rng *rand.Rand) string {
	b := make([]byte, 6+rng.IntN(30))
	for i := range b {
		b[i] = secretAlpha[rng.IntN(len(secretAlpha))]
	}
	if rng.IntN(3) == 0 { // bytes with other spellings
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] = "\"\\\n<\xff"[rng.IntN(5)]
		}
	}
	return string(b)
}

func randGapCase(rng *rand.Rand) gapCase {
	values := map[string]string{}
	var list, joins []string // joins: two values overlapping in the text
	for i := range 1 + rng.IntN(3) {
		v := randSecret(rng)
		switch {
		case i > 0 && rng.IntN(3) == 0: // a prefix or suffix of another
			o := list[rng.IntN(len(list))]
			if len(o) > 7 {
				if rng.IntN(2) == 0 {
					v = o[:6+rng.IntN(len(o)-6)]
				} else {
					v = o[rng.IntN(len(o)-6):]
				}
			}
		case i > 0 && rng.IntN(3) == 0: // overlapping another
			o := list[rng.IntN(len(list))]
			v = o[len(o)/2:] + v
			joins = append(joins, o[:len(o)/2]+v)
		}
		values["K"+strconv.Itoa(i)] = v
		list = append(list, v)
	}
	var forms []string
	for _, v := range list {
		forms = append(forms, spellingsOf(v)...)
	}
	forms = append(forms, joins...)
	tokens := []string{randBody(rng, 36), randBody(rng, 40) + "." + randBody(rng, 20)}
	forms = append(forms, "ghs_"+tokens[0], "ghs_"+tokens[1])
	var text strings.Builder
	for range 1 + rng.IntN(6) {
		if rng.IntN(3) > 0 {
			text.WriteString(forms[rng.IntN(len(forms))])
		}
		for range rng.IntN(12) {
			text.WriteByte(fillAlpha[rng.IntN(len(fillAlpha))])
		}
	}
	s := text.String()
	var drops [][2]int
	for range 1 + rng.IntN(4) {
		a := rng.IntN(len(s) + 1)
		b := min(a+rng.IntN(20), len(s))
		if rng.IntN(4) == 0 {
			b = a
		}
		drops = append(drops, [2]int{a, b})
	}
	return gapCase{values, tokens, s, mergeDrops(drops)}
}

func randBody(rng *rand.Rand, n int) string {
	const alpha = "QWXZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.IntN(len(alpha))]
	}
	return string(b)
}

// mergeDrops sorts drops and joins overlapping ones (empty ones stay: a
// gap with nothing left out, as a second Gap in a row).
func mergeDrops(d [][2]int) [][2]int {
	for i := range d {
		for j := i + 1; j < len(d); j++ {
			if d[j][0] < d[i][0] {
				d[i], d[j] = d[j], d[i]
			}
		}
	}
	var out [][2]int
	for _, x := range d {
		if n := len(out); n > 0 && x[0] < out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

func spellingsOf(v string) []string {
	j, _ := json.Marshal(v)
	q := strconv.Quote(v)
	return []string{v, string(j[1 : len(j)-1]), q[1 : len(q)-1]}
}

// run writes c's visible text to a Stream in random cuts (empty ones
// too), calling Gap where each drop was, and returns what it wrote.
func (c gapCase) run(rng *rand.Rand, maxCut int) string {
	r := secrets.New(c.values)
	var out bytes.Buffer
	w := r.Stream(&out)
	g := w.(gapper)
	pos := 0
	write := func(to int) {
		for pos < to {
			n := min(rng.IntN(maxCut+1), to-pos)
			p := []byte(c.text[pos : pos+n])
			w.Write(p)
			for i := range p {
				p[i] = '#'
			}
			pos += n
		}
	}
	for _, d := range c.drops {
		write(d[0])
		g.Gap()
		pos = d[1]
	}
	write(len(c.text))
	w.Close()
	return out.String()
}

// pieceIn returns a 4-byte piece of a credential of c (a value in any
// spelling, or a token shape's body) that out holds more often than the
// visible text spells it across a gap: short ends of two stretches side
// by side can spell a piece that the text never held (a writer can print
// that without any gap), but nothing more may show, credentials that
// overlap one another included.
func (c gapCase) pieceIn(out string) (string, bool) {
	var forms []string
	for _, v := range c.values {
		forms = append(forms, spellingsOf(v)...)
	}
	forms = append(forms, c.tokens...)
	var seen []byte
	var cuts []int
	pos := 0
	for _, d := range c.drops {
		seen, cuts, pos = append(seen, c.text[pos:d[0]]...), append(cuts, len(seen)+d[0]-pos), d[1]
	}
	seen = append(seen, c.text[pos:]...)
	across := func(p string) (n int) {
		for i := 0; i+4 <= len(seen); i++ {
			if string(seen[i:i+4]) == p && slices.ContainsFunc(cuts, func(k int) bool { return i < k && k < i+4 }) {
				n++
			}
		}
		return n
	}
	for _, f := range forms {
		for i := 0; i+4 <= len(f); i++ {
			p := f[i : i+4]
			if n := countAll(out, p); n > 0 && n > across(p) {
				return p, true
			}
		}
	}
	return "", false
}

// countAll counts p's occurrences in s, overlapping ones too.
func countAll(s, p string) (n int) {
	for i := 0; i+len(p) <= len(s); i++ {
		if s[i:i+len(p)] == p {
			n++
		}
	}
	return n
}

// TestAttackStreamGapsRandom: credentials in every spelling (prefixes,
// suffixes and overlaps of one another) and token shapes, among filler,
// cut by up to four gaps anywhere (at the start, at the end, two in a
// row, several in one credential), written in random cuts: no 4-byte
// piece of any of them is written.
func TestAttackStreamGapsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 13))
	for round := range 8000 {
		c := randGapCase(rng)
		out := c.run(rng, []int{1, 5, 40, 1 << 12}[round%4])
		if p, ok := c.pieceIn(out); ok {
			t.Fatalf("BREACH: round %d: %q of a credential written\nvalues %q\ntext %q\ndrops %v\nout %q", round, p, c.values, c.text, c.drops, out)
		}
	}
}

// TestAttackStreamGapThenWholeCredential: a whole credential written
// right after a gap (at the start of the next chunk, or after a few
// token bytes) is not cut in two by the mask the gap puts on what starts
// the chunk: a run of token bytes that stops inside it (at its '/'), or
// the end of another credential that overlaps its start.
func TestAttackStreamGapThenWholeCredential(t *testing.T) {
	const aws = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	cases := []struct {
		values map[string]string
		after  string
	}{
		{map[string]string{"AWS_SECRET": aws}, aws + "\n"},
		{map[string]string{"AWS_SECRET": aws}, "abc" + aws + "\n"},
		{map[string]string{"AWS_SECRET": aws}, "x" + strings.Repeat("y", 4200) + aws + "\n"},
		{map[string]string{"A": "one/two-three", "B": "three/four-five"}, "two-three/four-five\n"},
	}
	for i, c := range cases {
		for _, step := range []int{1, 3, 1 << 20} {
			r := secrets.New(c.values)
			var out bytes.Buffer
			w := r.Stream(&out)
			w.Write([]byte("before\n"))
			w.(gapper).Gap()
			for rest := c.after; rest != ""; {
				n := min(step, len(rest))
				w.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			w.Close()
			for _, v := range c.values {
				if p, ok := leaked(out.String(), v[len(v)/2:]); ok {
					t.Fatalf("BREACH: case %d, step %d: %q of a whole credential written after a gap: %q", i, step, p, out.String())
				}
			}
		}
	}
}

// countingWriter counts the writes it gets.
type countingWriter struct{ writes, bytes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes, c.bytes = c.writes+1, c.bytes+len(p)
	return len(p), nil
}

// TestAttackStreamGapHoldBounded: what follows a gap is never held back
// without end, whatever it is: a credential repeated back to back, or
// ones that overlap (a value whose end is its start), or a run of token
// bytes, written a byte at a time or in pieces that never end where an
// occurrence does. The destination keeps getting writes.
func TestAttackStreamGapHoldBounded(t *testing.T) {
	const secret = "tok-0a1b2c3d4e5f"
	r := secrets.New(map[string]string{"A": secret, "B": "key/1234key"})
	for i, endless := range []string{secret, "/1234key", "ghs_" + strings.Repeat("Zq9", 20), "Zq9-"} {
		for _, step := range []int{1, 7, 1000} {
			var dst countingWriter
			w := r.Stream(&dst)
			w.Write([]byte("before\n"))
			w.(gapper).Gap()
			before := dst.writes
			text := []byte(strings.Repeat(endless, (10<<10)/len(endless)))
			for len(text) > 0 {
				n := min(step, len(text))
				w.Write(text[:n])
				text = text[n:]
				if dst.writes == before && len(text) < 2<<10 {
					t.Fatalf("case %d, step %d: 8 KiB after a gap and nothing written yet", i, step)
				}
			}
		}
	}
}

// TestAttackStreamGapConcurrent: Gap from a queue's drain racing Write,
// Close and the redactor's Add (run with -race), and Gap on streams with
// no values, values too short to count, or a nil redactor, neither race
// nor panic, and write no known credential whole.
func TestAttackStreamGapConcurrent(t *testing.T) {
	const secret = "tok-0a1b2c3d4e5f"
	for k, r := range []*secrets.Redactor{secrets.New(map[string]string{"A": secret}), secrets.New(nil), secrets.New(map[string]string{"S": "abc"}), nil} {
		var mu sync.Mutex
		var out bytes.Buffer
		w := r.Stream(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return out.Write(p)
		}))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 300 {
					switch (g + i) % 4 {
					case 0:
						w.(gapper).Gap()
					case 1:
						w.Write([]byte(secret[:i%len(secret)]))
					case 2:
						w.Write(nil)
					default:
						r.Add("B", "tok-added-"+strconv.Itoa(i))
					}
				}
				w.Close()
			})
		}
		wg.Wait()
		w.Write([]byte(secret))
		w.(gapper).Gap()
		w.Close()
		if k == 0 && strings.Contains(out.String(), secret) {
			t.Fatalf("BREACH: %q written whole", secret)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
