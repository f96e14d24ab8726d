// Package lines cuts text to the lines sandgate shows in one-line places
// (progress, lists, page titles). It imports nothing of sandgate, so any
// package may use it (see TestImportDirection).
package lines

import "strings"

// First returns s up to its first newline.
func First(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
