package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptEnds: a script plays its replies in order; asked once more it
// answers with ErrScriptEnded, naming the file, instead of a plain message
// that would end the agent's turn as if it had finished.
func TestScriptEnds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "one.yaml")
	if err := os.WriteFile(p, []byte("- tool_calls: [{function: {name: finish, arguments: {summary: done}}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ms models
	m, err := ms.load("script:"+p, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(context.Background(), Request{})
	if err != nil || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "finish" {
		t.Fatalf("first reply: %+v %v", resp, err)
	}
	resp, err = m.Chat(context.Background(), Request{})
	if !errors.Is(err, ErrScriptEnded) || !strings.Contains(err.Error(), p) || resp != nil {
		t.Fatalf("past the end: %+v %v, want ErrScriptEnded naming %s", resp, err, p)
	}
}
