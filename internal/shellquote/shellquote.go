// Package shellquote quotes words for a POSIX shell, for the command
// lines sandgate prints for people to copy (hand-off takeover and answer
// commands).
package shellquote

import "strings"

// safe are the characters a word may hold and still go unquoted.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@+=,"

// Quote returns s as one shell word: as it is when it holds only safe
// characters, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
