package hostile

import "unicode"

// Token is the harness's CI and GitHub token in attack tests: long enough
// for the redactor, and the agent's job manages to print it.
const Token = "ghp_S3cr3tT0kenV4lueQwErTyUiOpLkJhGfDsZ"

// Unprintable is the first rune of s a terminal would act on rather than
// show: escapes, other controls, carriage returns, bidi overrides.
func Unprintable(s string) (rune, bool) {
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return r, true
		}
	}
	return 0, false
}
