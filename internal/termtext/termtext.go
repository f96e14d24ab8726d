package termtext

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Text returns s with every character a terminal could act on written
// out visibly, Go-style: ESC as \x1b, a carriage return as \r, C1 controls
// and bidirectional controls as \u009b, \u202e, a byte that is not UTF-8
// as \xff. Newlines and tabs stay. Text is not reversible (a literal
// "\x1b" in s prints the same as an escape character); it is idempotent.
func Text(s string) string { return escape(s, false) }

// Line is Text for a single line: newlines and tabs are escaped too
// (\n, \t), so the result holds no control character at all and keeps
// its place in a table or a progress line.
func Line(s string) string { return escape(s, true) }

func escape(s string, oneLine bool) string {
	if safe(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			writeHex(&b, 'x', uint32(s[i]), 2)
		case (r == '\n' || r == '\t') && !oneLine:
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			writeC0(&b, r)
		case dangerous(r):
			writeHex(&b, 'u', uint32(r), 4)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safe reports whether s needs no escaping (the common case, checked
// without allocating).
func safe(s string, oneLine bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && (oneLine || c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || dangerous(r) {
			return false
		}
		i += n
	}
	return true
}

// dangerous are the non-ASCII runes a terminal or a text renderer acts
// on: C1 controls (U+009B is CSI, U+009D OSC to a terminal that reads
// them), the bidirectional controls of "Trojan Source" (text that
// displays in another order than it reads), and the Unicode line and
// paragraph separators, which some renderers break lines at.
func dangerous(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// writeC0 writes an ASCII control character as Go would quote it.
func writeC0(b *strings.Builder, r rune) {
	const named = "\a\b\f\n\r\t\v"
	const letters = "abfnrtv"
	if i := strings.IndexRune(named, r); i >= 0 {
		b.WriteByte('\\')
		b.WriteByte(letters[i])
		return
	}
	writeHex(b, 'x', uint32(r), 2)
}

func writeHex(b *strings.Builder, kind byte, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteByte('\\')
	b.WriteByte(kind)
	for i := digits - 1; i >= 0; i-- {
		b.WriteByte(hex[v>>(4*uint(i))&0xf])
	}
}

// Name quotes a file name for a terminal as git quotes paths: a name
// holding a control character, a double quote, a backslash, a byte that
// is not UTF-8 or one of the dangerous runes above is written in double
// quotes with C escapes (\t, \n, \", \\) and octal bytes (\033, \302\233);
// any other name is printed as it is. Unlike git's default
// (core.quotePath=true) printable non-ASCII letters stay readable, as with
// core.quotePath=false; unlike core.quotePath=false, C1 and bidirectional
// controls are still quoted. The quoted form is a Go (and C) string
// literal, so strconv.Unquote gives the name back: Name is injective.
func Name(s string) string {
	if !needsQuote(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r == '\a', r == '\b', r == '\f', r == '\n', r == '\r', r == '\t', r == '\v':
			writeC0(&b, r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError && n <= 1 || dangerous(r):
			for _, c := range []byte(s[i : i+n]) {
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

func needsQuote(s string) bool {
	return strings.ContainsAny(s, `"\`) || !safe(s, true)
}

// Names quotes each name.
func Names(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Name(n)
	}
	return out
}

// Writer passes everything written to it through Text: for a command
// that copies a whole document (a diff, a hand-off) to the terminal. Each
// Write is escaped on its own, so a character split across two writes
// shows as its bytes (\xe2\x80), never as a control.
type Writer struct{ W io.Writer }

// Write implements io.Writer; it reports len(p) when the escaped text
// was written whole.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Colors reports whether sandgate may colour what it writes to w: w is a
// terminal, NO_COLOR (https://no-color.org) is unset or empty, and TERM
// is not "dumb".
func Colors(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// IsTerminal reports whether w is a character device (a terminal),
// looking through writers that wrap another (an Unwrap() io.Writer
// method, as the CLI's redacting writer has): with a credential in the
// environment, stdout is wrapped, and progress and colour were off.
func IsTerminal(w io.Writer) bool {
	for i := 0; i < 8; i++ {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Color is an SGR colour sandgate uses for its own marks.
type Color string

// The colours of sandgate's marks.
const (
	Green  Color = "32"
	Red    Color = "31"
	Yellow Color = "33"
	Bold   Color = "1"
)

// Paint wraps s in c when on; s must be sandgate's own text (a mark, a
// status word), since nothing here escapes it.
func Paint(on bool, c Color, s string) string {
	if !on || s == "" {
		return s
	}
	return "\x1b[" + string(c) + "m" + s + "\x1b[0m"
}

// Short is Line of at most limit runes of s, marked with " …" when cut:
// for a reason in a status line or a table cell, whose whole text is in
// the run's files.
func Short(s string, limit int) string {
	n := 0
	for i := range s {
		if n == limit {
			return Line(s[:i]) + " …"
		}
		n++
	}
	return Line(s)
}

// JSON makes encoded JSON safe for a terminal without changing what it
// says: the characters a terminal acts on that encoding/json leaves raw
// (DEL, C1 controls, bidi controls; any control character or invalid byte
// of embedded raw JSON) become \u escapes. JSON's own syntax is ASCII, so
// they can only stand inside strings, where the escape means the same
// character (an invalid byte becomes U+FFFD, as encoding/json makes it).
func JSON(b []byte) []byte {
	if safe(string(b), false) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			out = append(out, `\ufffd`...)
		case r == '\n' || r == '\t':
			out = append(out, byte(r))
		case r < 0x20 || r == 0x7f || dangerous(r):
			out = append(out, '\\', 'u')
			for s := 12; s >= 0; s -= 4 {
				out = append(out, "0123456789abcdef"[r>>uint(s)&0xf])
			}
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
