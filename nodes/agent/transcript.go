package agent

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sandgate/sandgate/runtime"
)

// transcript records prompts, completions and tool calls in the attempt
// directory rather than in span attributes.
type transcript struct {
	f *os.File
	w io.Writer // f, redacting credentials
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
