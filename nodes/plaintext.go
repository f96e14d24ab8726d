package nodes

import (
	"regexp"
	"strings"
)

// Text from outside the harness (CI logs and check names, reviewers'
// comments) reaches the agent's prompt, the run's files and, through
// reasons and `sandgate show`, the operator's terminal. The agent can put
// almost anything there: a job it names, a test that prints. plainText
// keeps such text printable: no terminal escape sequences (an OSC 52
// would write the operator's clipboard, a cursor move would hide lines),
// no other control characters, carriage returns or bidirectional
// overrides (text that displays other than it reads). Newlines and tabs
// stay.

// termRE matches escape sequences whole: CSI with private and
// intermediate bytes, string sequences (OSC, DCS, PM, APC, SOS) up to BEL,
// ST or the end of the line, two-byte escapes, and the 8-bit CSI.
var termRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[ -~]|\x{9b}[0-?]*[ -/]*[@-~]`)

func plainText(s string) string {
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

// plainTexts is plainText of each.
func plainTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = plainText(s)
	}
	return out
}
