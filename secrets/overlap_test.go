package secrets

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// overlapValues are credentials that overlap one another: K2 is a prefix
// of K0, A's end is B's start, C's start is D's end.
var overlapValues = map[string]string{
	"K0": "Q259Q4XQ", "K2": "Q259Q4X",
	"A": "ABC123XYZ", "B": "XYZ789DEF",
	"C": "MNO456", "D": "RST0MNO",
}

// oldString is the redaction of whole texts before overlaps were merged:
// one strings.Replacer over the forms, longest first, then the shapes.
func oldString(r *Redactor, s string) string {
	var args []string
	for _, f := range r.state().forms {
		args = append(args, f.text, f.marker)
	}
	return patterns(strings.NewReplacer(args...).Replace(s))
}

// partialOverlap says whether two occurrences of forms in s overlap
// without one containing the other.
func partialOverlap(r *Redactor, s string) bool {
	var iv [][2]int
	for _, f := range r.state().forms {
		for i := 0; i+len(f.text) <= len(s); i++ {
			if s[i:i+len(f.text)] == f.text {
				iv = append(iv, [2]int{i, i + len(f.text)})
			}
		}
	}
	for _, a := range iv {
		for _, b := range iv {
			if a[0] < b[0] && b[0] < a[1] && a[1] < b[1] {
				return true
			}
		}
	}
	return false
}

// TestOverlapWholeText: a text where credentials overlap is masked over
// the union of their occurrences, one marker per merged run, that of the
// run's first (longest) occurrence.
func TestOverlapWholeText(t *testing.T) {
	r := New(overlapValues)
	for text, want := range map[string]string{
		"Q259Q4XQ259Q4XQ":     "[redacted K0]",
		"Q259Q4XQ259Q4X":      "[redacted K0]",
		"x ABC123XYZ789DEF y": "x [redacted A] y",
		"RST0MNO456":          "[redacted D]",
		"Q259Q4XQ Q259Q4X":    "[redacted K0] [redacted K2]",
		"ABC123XYZXYZ789DEF":  "[redacted A][redacted B]",
	} {
		if got := r.String(text); got != want {
			t.Errorf("%q redacted as %q, want %q", text, got, want)
		}
	}
}

// TestOverlapSameAsBefore: random texts of overlapping credentials and
// filler redact as before wherever no two occurrences partly overlap,
// and never leave a value whole.
func TestOverlapSameAsBefore(t *testing.T) {
	r := New(overlapValues)
	pieces := []string{"ab", " ", "\n", "x", "ghs_" + strings.Repeat("a1", 16)}
	for _, v := range overlapValues {
		pieces = append(pieces, v, v[:3], v[3:])
	}
	rng := rand.New(rand.NewPCG(3, 4))
	same := 0
	for round := range 5000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		got := r.String(text)
		for _, v := range overlapValues {
			if strings.Contains(got, v) {
				t.Fatalf("round %d: %q redacted as %q: %q in clear", round, text, got, v)
			}
		}
		if !partialOverlap(r, text) {
			same++
			if old := oldString(r, text); got != old {
				t.Fatalf("round %d: %q redacted as %q, before %q", round, text, got, old)
			}
		}
	}
	if same < 1000 {
		t.Fatalf("only %d texts without overlaps", same)
	}
}

// streamCuts writes text to a Stream of r cut at random places.
func streamCuts(r *Redactor, rng *rand.Rand, text []byte, maxCut int) string {
	var out bytes.Buffer
	w := r.Stream(&out)
	for rest := text; len(rest) > 0; {
		n := min(rng.IntN(maxCut), len(rest))
		w.Write(rest[:n])
		rest = rest[n:]
	}
	w.Close()
	return out.String()
}

// TestOverlapStreamRandomCuts: a Stream cut anywhere writes texts of
// overlapping credentials (prefix, suffix, end-on-start) exactly as the
// whole text redacts. In odd rounds the text is whole values and lower
// case filler only, so every upper case letter or digit is in an
// occurrence of a value and none may be written.
func TestOverlapStreamRandomCuts(t *testing.T) {
	r := New(overlapValues)
	whole := []string{"ab", " ", "\n"}
	for _, v := range overlapValues {
		whole = append(whole, v, v)
	}
	parts := slices.Clone(whole)
	for _, v := range overlapValues {
		parts = append(parts, v[:4], v[4:])
	}
	markers := regexp.MustCompile(`\[redacted [A-Z0-9]+\]`)
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 4000 {
		pieces := parts
		if round%2 == 1 {
			pieces = whole
		}
		var text []byte
		for range 1 + rng.IntN(20) {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		want := r.String(string(text))
		got := streamCuts(r, rng, text, 20)
		if clear := markers.ReplaceAllString(got, ""); round%2 == 1 && strings.ContainsAny(clear, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") {
			t.Fatalf("round %d: %q streamed as %q: a value's bytes in clear", round, text, got)
		}
		if got != want {
			t.Fatalf("round %d: %q streamed as %q, want %q", round, text, got, want)
		}
	}
}

// TestStreamLongToken: a token shape longer than patternMax, written in
// pieces of every size, is masked whole by a Stream as by Bytes, and the
// stream holds back no more than about patternMax bytes.
func TestStreamLongToken(t *testing.T) {
	r := New(map[string]string{"K0": "Q259Q4XQ"})
	rng := rand.New(rand.NewPCG(7, 8))
	body := make([]byte, 5000)
	for i := range body {
		body[i] = "abcdefghijklmnopqrstuvwxyz0123456789-_"[rng.IntN(38)]
	}
	for _, text := range []string{
		"x ghs_" + string(body) + " y",
		"x ghs_" + string(body),
		"ghs_" + string(body[:4500]) + "." + string(body[4500:]) + ". y",
		"ghs_" + string(body[:4500]) + ".. y ghs_" + string(body[:40]) + "\n",
		"ghs_" + string(body) + ".",
		"ghs_" + string(body) + " Q259Q4XQ z",
		"Q259Q4XQghs_" + string(body) + "..Q259Q4XQ\n",
	} {
		want := r.String(text)
		for _, maxCut := range []int{3, 100, 3000, 9000} {
			var held int
			var out bytes.Buffer
			w := r.Stream(&out)
			for rest := []byte(text); len(rest) > 0; {
				n := min(1+rng.IntN(maxCut), len(rest))
				w.Write(rest[:n])
				rest = rest[n:]
				held = max(held, len(w.(*stream).buf))
			}
			w.Close()
			if got := out.String(); got != want {
				t.Fatalf("cuts up to %d: %.60q... streamed as %q, want %q", maxCut, text, got, want)
			}
			if held > patternMax+len("Q259Q4XQ") {
				t.Fatalf("cuts up to %d: held %d bytes", maxCut, held)
			}
		}
	}
}

// TestStreamLongTokenHoldsValue: a value inside a token shape longer than
// patternMax, written in pieces, is masked with the shape, and so is the
// rest of the shape. (Whole-text redaction masks the value first, which
// cuts the shape short: see the report of h-overlap.)
func TestStreamLongTokenHoldsValue(t *testing.T) {
	r := New(map[string]string{"K0": "Q259Q4XQ"})
	rng := rand.New(rand.NewPCG(9, 10))
	tail := strings.Repeat("tail", 50)
	text := "ghs_" + strings.Repeat("b", 5000) + "Q259Q4XQ" + tail + " end"
	for _, maxCut := range []int{5, 700, 9000} {
		got := streamCuts(r, rng, []byte(text), maxCut)
		if strings.Contains(got, "Q259") || strings.Contains(got, "tailtail") || !strings.HasSuffix(got, " end") {
			t.Fatalf("cuts up to %d: streamed as %q", maxCut, got)
		}
	}
}

// TestStreamLongTokensRandom: random texts of token shapes longer and
// shorter than patternMax, dots, values and spaces, cut at random, are
// streamed as the whole text redacts.
func TestStreamLongTokensRandom(t *testing.T) {
	r := New(map[string]string{"K0": "Q259Q4XQ"})
	rng := rand.New(rand.NewPCG(11, 12))
	chunk := []byte(strings.Repeat("a1-_", 700))
	pieces := []string{"ghs_", "ghs_", string(chunk), string(chunk), string(chunk[:37]), ".", "..", " ", "\n", " Q259Q4XQ ", "ghs"}
	for round := range 1500 {
		var text []byte
		for range 1 + rng.IntN(12) {
			text = append(text, pieces[rng.IntN(len(pieces))]...)
		}
		want := r.String(string(text))
		for _, maxCut := range []int{50, 2000, 7000} {
			if got := streamCuts(r, rng, text, maxCut); got != want {
				t.Fatalf("round %d, cuts up to %d: %q streamed as %q, want %q", round, maxCut, text, got, want)
			}
		}
	}
}

// TestStreamLongTokenGap: a gap inside a token shape longer than
// patternMax leaves neither side of it in clear.
func TestStreamLongTokenGap(t *testing.T) {
	r := New(map[string]string{"K0": "Q259Q4XQ"})
	var out bytes.Buffer
	w := r.Stream(&out)
	w.Write([]byte("a ghs_" + strings.Repeat("x", 5000) + "."))
	w.(interface{ Gap() error }).Gap()
	w.Write([]byte(strings.Repeat("y", 50) + " b"))
	w.Close()
	if want := "a " + patternMarker + gapMarker + " b"; out.String() != want {
		t.Fatalf("streamed as %q, want %q", out.String(), want)
	}
}
