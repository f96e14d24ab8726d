package feedback

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Tail keeps the last n bytes of s, on a line boundary when possible.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + s
}

// TimedOut is " (timed out)" for a command the box stopped at its
// timeout (sandbox.Result.TimedOut), else "".
func TimedOut(timedOut bool) string {
	if timedOut {
		return " (timed out)"
	}
	return ""
}

// DiskNote tells the agent when a command failed because the box's disk
// limit was reached (sandbox.Result.DiskFull, with its DiskNote), which
// its output alone (ENOSPC) does not explain.
func DiskNote(full bool, note string) string {
	if !full {
		return ""
	}
	return "\nNote: " + note + "."
}

// HumanBytes renders a byte count for people.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// Text from outside the harness (CI logs and check names, reviewers'
// comments) reaches the agent's prompt, the run's files and, through
// reasons and `sandgate show`, the operator's terminal. The agent can put
// almost anything there: a job it names, a test that prints. PlainText
// keeps such text printable: no terminal escape sequences (an OSC 52
// would write the operator's clipboard, a cursor move would hide lines),
// no other control characters, carriage returns or bidirectional
// overrides (text that displays other than it reads). Newlines and tabs
// stay.

// termRE matches escape sequences whole: CSI with private and
// intermediate bytes, string sequences (OSC, DCS, PM, APC, SOS) up to BEL,
// ST or the end of the line, two-byte escapes, and the 8-bit CSI.
var termRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[ -~]|\x{9b}[0-?]*[ -/]*[@-~]`)

// PlainText is s without what a terminal would act on rather than show.
func PlainText(s string) string {
	s = termRE.ReplaceAllString(strings.ToValidUTF8(s, "\uFFFD"), "")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			return -1
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
}

// PlainTexts is PlainText of each.
func PlainTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = PlainText(s)
	}
	return out
}

// Capped keeps the first 64 KiB written to it: a remote cannot make the
// harness hold an unbounded error message.
type Capped struct{ bytes.Buffer }

func (c *Capped) Write(p []byte) (int, error) {
	if room := 64<<10 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
