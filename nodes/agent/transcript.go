package agent

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// transcript records a session in transcript.jsonl in the attempt
// directory (rather than in span attributes), one JSON object a line,
// credentials redacted:
//
//   - request: what the harness added to the conversation since the
//     previous request (the system prompt and task on the first, then
//     tool results and feedback), with the turn number and the index of
//     the first of those messages ("from"); the first also names the tools
//     on offer.
//   - completion: the model's answer (its message, usage, finish reason).
//   - tool: one tool call carried out, with its arguments and result.
//   - finish / handoff: how the session ended.
//
// The conversation the model saw at turn N is the messages of every
// request up to N interleaved with the completions before it, in file
// order; each message is written once, so a long session's transcript
// grows with the conversation, not with its square.
type transcript struct {
	f *os.File
	w io.Writer // f, redacting credentials
	// logged counts the conversation's messages already written.
	logged int
}

func newTranscript(in *runtime.Input) *transcript {
	dir, err := in.MkDir()
	if err != nil {
		return &transcript{}
	}
	f, err := os.Create(filepath.Join(dir, "transcript.jsonl"))
	if err != nil {
		return &transcript{}
	}
	return &transcript{f: f, w: in.Redactor.Writer(f)}
}

// request records the messages of msgs not yet written.
func (t *transcript) request(turn int, msgs []Message, tools []ToolSpec) {
	from := min(t.logged, len(msgs))
	entry := map[string]any{"turn": turn, "from": from, "messages": msgs[from:]}
	if from == 0 {
		names := make([]string, len(tools))
		for i, s := range tools {
			names[i] = s.Name
		}
		entry["tools"] = names
	}
	t.logged = len(msgs)
	t.add("request", entry)
}

// completion records the model's answer, which the session appends to
// the conversation: later requests do not repeat it.
func (t *transcript) completion(turn int, resp *Response) {
	t.logged++
	t.add("completion", map[string]any{"turn": turn, "message": resp.Message, "finish_reason": resp.FinishReason,
		"tokens_in": resp.Usage.Input, "tokens_out": resp.Usage.Output})
}

func (t *transcript) add(kind string, v any) {
	if t.f == nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"time": time.Now().UTC(), "kind": kind, "data": v})
	_, _ = t.w.Write(append(b, '\n'))
}

func (t *transcript) close() {
	if t.f != nil {
		t.f.Close()
	}
}
