// Package termtext prints text sandgate did not write — an agent's
// reasons and summaries, file names and test names from a repository,
// command output — to a terminal as data. Whatever the text holds, the
// terminal receives printable characters only: an escape sequence cannot
// erase or overwrite a line, move the cursor, write the clipboard (OSC 52)
// or hide a link (OSC 8), and bidirectional overrides cannot make text
// display other than it reads.
//
// Text keeps newlines and tabs; Line escapes them too, for one-line
// fields and table cells; Name quotes a file name as git does with
// core.quotePath. Code and Fence quote text in Markdown (handoff.md, a
// review's summary.md) as a code span or a fenced block it cannot close.
// Colour comes only from sandgate (Colors decides when)
// and never from the text.
//
// The package imports nothing of sandgate's, so every command can use it.
package termtext
