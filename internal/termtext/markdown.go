package termtext

import "strings"

// Code quotes s as a Markdown code span: one line (newlines and controls
// written out as Line does, so it cannot start a heading or a block),
// between backtick runs longer than any inside, so Markdown shows it
// literally: no link, no emphasis, no HTML. The empty string is
// "(empty)".
func Code(s string) string {
	s = Line(s)
	if s == "" {
		return "(empty)"
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' && s[len(s)-1] == ' ' {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// Fence quotes text as a fenced Markdown code block with info string
// lang: its control characters are written out as Text does (a carriage
// return would otherwise end a line for Markdown and rewrite one on a
// terminal), and the fence is longer than any backtick run in it, so no
// line of it can close the block.
func Fence(lang, text string) string {
	text = Text(strings.TrimRight(text, "\n"))
	fence := "```" + strings.Repeat("`", max(0, longestRun(text, '`')-2))
	return fence + lang + "\n" + text + "\n" + fence
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
