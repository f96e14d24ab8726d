package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listConn is a server that lists the given tools.
type listConn struct{ list []*mcp.Tool }

func (l listConn) tools() []*mcp.Tool { return l.list }
func (l listConn) call(context.Context, string, map[string]any) (string, error) {
	return "", errors.New(strings.Repeat("E", 4<<20))
}
func (l listConn) close() {}

// TestMCPToolListBounded attacks the model's context (and the cost
// budget's estimate) with a server whose tool list is huge: thousands of
// tools behind server.*, or one tool whose input schema is megabytes.
// What reaches the model is bounded: too many tools or too large a schema
// refuse the session before any model call, naming the server.
func TestMCPToolListBounded(t *testing.T) {
	many := make([]*mcp.Tool, 1000)
	for i := range many {
		many[i] = &mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: strings.Repeat("d", 2000)}
	}
	props := map[string]any{}
	for i := range 20000 {
		props[fmt.Sprintf("p%d", i)] = map[string]any{"type": "string", "description": strings.Repeat("x", 50)}
	}
	huge := []*mcp.Tool{{Name: "big", InputSchema: map[string]any{"type": "object", "properties": props}}}
	for name, list := range map[string][]*mcp.Tool{"many": many, "huge": huge} {
		h := &mcpHub{conns: map[string]mcpCaller{"srv": listConn{list}}}
		err := h.resolve([]string{"srv.*"})
		if err == nil {
			b, _ := json.Marshal(h.specs)
			t.Errorf("%s: %d tools, %d bytes offered to the model on every call", name, len(h.specs), len(b))
		} else if !strings.Contains(err.Error(), "srv") {
			t.Errorf("%s: %v, want the server named", name, err)
		}
	}
}

// TestMCPErrorClipped: a server's error (a JSON-RPC error message can be
// megabytes) reaches the model clipped like any tool output.
func TestMCPErrorClipped(t *testing.T) {
	h := &mcpHub{conns: map[string]mcpCaller{"srv": listConn{}}}
	out := h.call(context.Background(), mcpTool{server: "srv", tool: "t"}, "{}")
	if len(out) > maxToolOutput+200 {
		t.Errorf("a %d-byte error went to the model", len(out))
	}
}
