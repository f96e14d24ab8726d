// Package feedback shapes the text the harness hands back to the agent
// and shows people: cut to a bound on a line boundary, made printable
// (text from CI logs, reviewers and test binaries is data, never terminal
// control), and sized for reading.
//
// It imports nothing of sandgate's but the sandbox's result type; every
// node package may use it, and it must never import a node package, the
// workspace or the runtime.
package feedback
