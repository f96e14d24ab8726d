package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
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

// TestMCPHTTPNoRedirects attacks the harness's MCP client with a server
// that redirects: the client must not follow it anywhere (another host,
// even one the proxy allows, would get the session's requests), so the
// call fails instead. The "proxy" here is a unix-socket server that
// answers every request itself and records the hosts asked for.
func TestMCPHTTPNoRedirects(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hosts []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.URL.Host)
		mu.Unlock()
		http.Redirect(w, r, "http://elsewhere.example/steal", http.StatusTemporaryRedirect)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	resp, err := proxyClient(sock).Post("http://mcp.example/mcp", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if err == nil || len(hosts) != 1 {
		t.Fatalf("the client followed a redirect: asked for %v (err %v)", hosts, err)
	}
}
