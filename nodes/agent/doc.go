// Package agent is sandgate's agent node: an LLM behind any
// OpenAI-compatible endpoint, given a small set of tools that act only
// inside the run's sandbox, and bounded by turns, tokens and time.
//
// The model proposes; every tool call is checked and carried out by the
// harness in the box, and a malformed call goes back to the model as a tool
// error. The node talks to its model through the Model interface (one chat
// turn with tools): the OpenAI-compatible client is one implementation,
// an embedder may supply its own (Options.Provider), and offline a
// blueprint runs against a scripted model (script:FILE) or a recorded
// session (replay:FILE), both answering in process. Recordings store each
// exchange in the OpenAI wire form, so a replay fails loudly when the
// conversation drifts from what was recorded.
package agent
