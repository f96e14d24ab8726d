package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPBlueprintNotAFile attacks the MCP server with blueprint paths
// that are not files: a FIFO nobody writes (reading it would hang the
// tool, and with it the server's caller) and /dev/zero (reading it would
// grow the server's memory until the kernel kills it). Each is refused
// with the path named. A hang has no deadline here: go test's -timeout
// names the call it hung in.
func TestMCPBlueprintNotAFile(t *testing.T) {
	cs := mcpClient(t, nil)
	fifo := filepath.Join(t.TempDir(), "bp.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, key, path string }{
		{"validate_blueprint", "path", fifo}, {"graph", "path", fifo}, {"start_run", "blueprint", fifo},
		{"validate_blueprint", "path", "/dev/zero"}, {"start_run", "blueprint", "/dev/zero"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{c.key: c.path}})
		if err != nil {
			t.Fatalf("%s %s: %v (the tool hung or the server died)", c.tool, c.path, err)
		}
		text := ""
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !strings.Contains(text, c.path) || !strings.Contains(text, "not a regular file") {
			t.Errorf("%s %s: %q, want a refusal naming the path", c.tool, c.path, text)
		}
	}
}

// TestMCPHugeBlueprint: a blueprint file past the size cap is refused
// before it is parsed.
func TestMCPHugeBlueprint(t *testing.T) {
	cs := mcpClient(t, nil)
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("version: 1\n# "+strings.Repeat("x", 64<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, text, _ := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": big})
	if !strings.Contains(text, "larger than") {
		t.Errorf("64 MiB blueprint: %q, want refused as too large", text)
	}
}
