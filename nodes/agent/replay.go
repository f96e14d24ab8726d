package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"
)

// replayModel answers with a recording's responses, in order, as long as
// each request matches the recorded one; it fails loudly when the
// conversation no longer matches, so a changed prompt or tool result
// cannot pass against stale answers.
type replayModel struct {
	mu   sync.Mutex
	rec  []exchange
	next int
	// mcp holds the recording's MCP tool lists and calls: a replayed run
	// needs no server.
	mcp *mcpTape
}

// Chat implements Model.
func (m *replayModel) Chat(_ context.Context, req Request) (*Response, error) {
	body, err := json.Marshal(wireRequest(req))
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next >= len(m.rec) {
		return nil, fmt.Errorf("replay: request %d was not recorded (the recording has %d)", m.next+1, len(m.rec))
	}
	want := m.rec[m.next]
	if d := diffJSON(want.Request, compactJSON(body)); d != "" {
		return nil, fmt.Errorf("replay: request %d no longer matches the recording: %s", m.next+1, d)
	}
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(want.Response, &resp); err != nil {
		return nil, fmt.Errorf("replay: response %d: %w", m.next+1, err)
	}
	m.next++
	return fromWire(resp), nil
}

// loadRecording reads a recording: model exchanges, and the MCP lines
// among them.
func loadRecording(path string) ([]exchange, *mcpTape, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	var out []exchange
	tape := &mcpTape{lists: map[string][]*mcp.Tool{}}
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e recLine
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, nil, fmt.Errorf("replay %s:%d: %w", path, i+1, err)
		}
		switch {
		case e.MCPTools != nil:
			tape.lists[e.MCPTools.Server] = e.MCPTools.Tools
		case e.MCPCall != nil:
			tape.calls = append(tape.calls, e.MCPCall)
		default:
			out = append(out, exchange{Request: e.Request, Response: e.Response})
		}
	}
	return out, tape, nil
}

// diffJSON describes the first difference between two JSON documents.
func diffJSON(a, b []byte) string {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		if bytes.Equal(a, b) {
			return ""
		}
		return "bodies differ"
	}
	// The model name differs by design: a replay stands in for the model
	// that was recorded.
	for _, m := range []any{x, y} {
		if obj, ok := m.(map[string]any); ok {
			delete(obj, "model")
		}
	}
	return firstDiff("", x, y)
}

func firstDiff(path string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return path + ": type changed"
		}
		for k := range xv {
			if d := firstDiff(path+"."+k, xv[k], yv[k]); d != "" {
				return d
			}
		}
		for k := range yv {
			if _, ok := xv[k]; !ok {
				return path + "." + k + ": new field"
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok || len(yv) != len(xv) {
			return fmt.Sprintf("%s: length changed", path)
		}
		for i := range xv {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i]); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(x) != fmt.Sprint(y) {
			return fmt.Sprintf("%s: recorded %.80q, now %.80q", path, fmt.Sprint(x), fmt.Sprint(y))
		}
	}
	return ""
}
