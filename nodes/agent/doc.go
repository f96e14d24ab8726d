// Package agent is sandgate's agent node: an LLM behind any
// OpenAI-compatible endpoint, given a small set of tools that act only
// inside the run's sandbox, and bounded by turns, tokens and time.
//
// The model proposes; every tool call is checked and carried out by the
// harness in the box, and a malformed call goes back to the model as a tool
// error. Offline, a blueprint runs against a scripted model (script:FILE)
// or a recorded session (replay:FILE), both served by an OpenAI-compatible
// HTTP server on loopback so the real client path runs.
package agent
