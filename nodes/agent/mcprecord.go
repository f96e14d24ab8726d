package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A recording (--record) holds, besides the model exchanges, one
// mcp_tools line per server the session started (its tool list) and one
// mcp_call line per call (arguments and the text the model got). Replay
// answers from them, so a replayed run starts no server and reaches none.

// recLine is one line of a recording.
type recLine struct {
	Request  json.RawMessage `json:"request,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	MCPTools *mcpToolsRec    `json:"mcp_tools,omitempty"`
	MCPCall  *mcpCallRec     `json:"mcp_call,omitempty"`
}

type mcpToolsRec struct {
	Server string      `json:"server"`
	Tools  []*mcp.Tool `json:"tools"`
}

type mcpCallRec struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	used      bool
}

// appendRecord appends one line to the recording; like model exchanges,
// a failed write does not fail the run.
func appendRecord(mu *sync.Mutex, path string, line recLine) {
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

// recordConn records a live server's calls.
type recordConn struct {
	mcpCaller
	server string
	mu     *sync.Mutex
	path   string
}

func (r *recordConn) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	out, err := r.mcpCaller.call(ctx, tool, args)
	a, _ := json.Marshal(args)
	rec := &mcpCallRec{Server: r.server, Tool: tool, Arguments: a, Result: out}
	if err != nil {
		rec.Error = err.Error()
	}
	appendRecord(r.mu, r.path, recLine{MCPCall: rec})
	return out, err
}

// mcpTape is a recording's MCP lines, for replay.
type mcpTape struct {
	mu    sync.Mutex
	lists map[string][]*mcp.Tool
	calls []*mcpCallRec
}

// replayConn answers one server's calls from the tape: the first unused
// call of that tool with the same arguments (parallel nodes may have
// interleaved their calls).
type replayConn struct {
	server string
	tape   *mcpTape
}

func (r *replayConn) tools() []*mcp.Tool { return r.tape.lists[r.server] }

func (r *replayConn) call(_ context.Context, tool string, args map[string]any) (string, error) {
	a, _ := json.Marshal(args)
	r.tape.mu.Lock()
	defer r.tape.mu.Unlock()
	for _, c := range r.tape.calls {
		if c.used || c.Server != r.server || c.Tool != tool || diffJSON(c.Arguments, a) != "" {
			continue
		}
		c.used = true
		if c.Error != "" {
			return c.Result, errors.New(c.Error)
		}
		return c.Result, nil
	}
	return "", fmt.Errorf("replay: the recording has no call of %s.%s with arguments %s", r.server, tool, a)
}

func (r *replayConn) close() {}
