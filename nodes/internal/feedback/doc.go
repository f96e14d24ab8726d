// Package feedback shapes the text the harness hands back to the agent
// and shows people: cut to a bound on a line boundary, made printable
// (text from CI logs, reviewers and test binaries is data, never terminal
// control), and sized for reading.
//
// It imports nothing of sandgate's: every package may use it.
package feedback
