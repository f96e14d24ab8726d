package runtime

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Gate feedback is often one message repeated per test, file or retry
// ("calc_test.go:12: Add(2, 3) = -1, want 5" a hundred times with other
// numbers). A person reading a hand-off needs one of each, and a count.

var (
	// locPattern matches file:line and file:line:col positions.
	locPattern = regexp.MustCompile(`[\w./\\-]+\.\w+:\d+(:\d+)?`)
	// hexPattern matches hashes and addresses: 0x numbers and words of
	// seven or more hex digits (hexWord keeps those with a digit, so
	// "deadbeef"-like words stay words).
	hexPattern = regexp.MustCompile(`\b(0x[0-9a-fA-F]+|[0-9a-fA-F]{7,})\b`)
	digits     = regexp.MustCompile(`-?[0-9]+`)
)

// lineShape is a line with its varying parts (positions, hex ids,
// numbers) replaced by placeholders: two lines of the same shape say the
// same thing about different places.
func lineShape(line string) string {
	s := locPattern.ReplaceAllString(line, "<loc>")
	s = hexPattern.ReplaceAllStringFunc(s, hexWord)
	return digits.ReplaceAllString(s, "#")
}

func hexWord(w string) string {
	if strings.HasPrefix(w, "0x") || strings.ContainsAny(w, "0123456789") {
		return "<hex>"
	}
	return w
}

// lineRun is a run of consecutive lines of one shape: the first line and
// how many lines the run holds.
type lineRun struct {
	first string
	n     int
}

// runsOf groups consecutive lines of the same shape.
func runsOf(lines []string) []lineRun {
	var out []lineRun
	prev := ""
	for _, l := range lines {
		shape := lineShape(l)
		if len(out) > 0 && shape == prev {
			out[len(out)-1].n++
			continue
		}
		out = append(out, lineRun{first: l, n: 1})
		prev = shape
	}
	return out
}

// collapseLines keeps the first line of every run of similar consecutive
// lines and replaces the rest by one "… N similar lines" line, then cuts
// the text to at most maxBytes (at a line boundary where it can), saying
// how many lines were cut.
func collapseLines(s string, maxBytes int) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for _, r := range runsOf(lines) {
		out = append(out, r.first)
		if r.n > 1 {
			out = append(out, similarLine(r.n-1))
		}
	}
	return capLines(out, maxBytes)
}

func similarLine(n int) string {
	if n == 1 {
		return "… 1 similar line"
	}
	return fmt.Sprintf("… %d similar lines", n)
}

// capLines joins lines, keeping the whole within maxBytes.
func capLines(lines []string, maxBytes int) string {
	total := 0
	for _, l := range lines {
		total += len(l) + 1
	}
	if total-1 <= maxBytes {
		return strings.Join(lines, "\n")
	}
	var b strings.Builder
	for i, l := range lines {
		note := fmt.Sprintf("… %d more lines cut", len(lines)-i)
		room := maxBytes - b.Len() - len(note) - 1
		if len(l)+1 > room {
			if i == 0 && room > 0 {
				b.WriteString(cutUTF8(l, room-1))
				b.WriteByte('\n')
			}
			if b.Len()+len(note) <= maxBytes {
				b.WriteString(note)
			}
			return b.String()
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
