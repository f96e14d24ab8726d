package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// serveModel is an OpenAI-compatible chat endpoint answering from m, for
// tests that want the real HTTP client end to end.
func serveModel(t *testing.T, m Model) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var wire struct {
			Model       string    `json:"model"`
			Messages    []Message `json:"messages"`
			Temperature float32   `json:"temperature"`
			Tools       []struct {
				Function struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					Parameters  json.RawMessage `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(body, &wire); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := Request{Model: wire.Model, Messages: wire.Messages, Temperature: wire.Temperature}
		for _, tl := range wire.Tools {
			req.Tools = append(req.Tools, ToolSpec{Name: tl.Function.Name, Description: tl.Function.Description, Parameters: tl.Function.Parameters})
		}
		resp, err := m.Chat(r.Context(), req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(toWire(resp))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

const testScript = `- tool_calls:
    - {function: {name: read_file, arguments: {path: calc.go}}}
- tool_calls:
    - {id: mine, function: {name: edit_file, arguments: '{"path":"calc.go","old":"a - b","new":"a + b"}'}}
- content: Fixed.
  usage: {prompt_tokens: 7, completion_tokens: 3}
`

func scriptFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fix.yaml")
	if err := os.WriteFile(p, []byte(testScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func turn(msgs ...Message) Request {
	return Request{Model: "script", Messages: msgs, Tools: toolSpecsFor(DefaultTools())}
}

// conversation drives a model through the script's three turns, feeding
// back a tool result after each call, and returns its answers.
func conversation(t *testing.T, m Model) []*Response {
	t.Helper()
	msgs := []Message{{Role: RoleSystem, Content: "fix calc"}, {Role: RoleUser, Content: "start"}}
	var out []*Response
	for range 3 {
		resp, err := m.Chat(context.Background(), turn(msgs...))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp)
		msgs = append(msgs, resp.Message)
		for _, c := range resp.Message.ToolCalls {
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: c.ID, Content: "ok " + c.Name})
		}
	}
	return out
}

// TestScriptInProcessMatchesHTTP: the in-process script model and the same
// script behind the real OpenAI client over loopback give the same
// answers, token counts included, so dropping the loopback server changed
// nothing a run can see.
func TestScriptInProcessMatchesHTTP(t *testing.T) {
	script, err := loadScript(scriptFile(t))
	if err != nil {
		t.Fatal(err)
	}
	direct := conversation(t, &scriptModel{script: script})
	script, _ = loadScript(scriptFile(t))
	viaHTTP := conversation(t, newOpenAIModel(serveModel(t, &scriptModel{script: script}), "offline", nil))
	if !reflect.DeepEqual(direct, viaHTTP) {
		t.Fatalf("in process:\n%+v\nover HTTP:\n%+v", direct, viaHTTP)
	}
	if c := direct[0].Message.ToolCalls; len(c) != 1 || c[0].Name != "read_file" || c[0].Arguments != `{"path":"calc.go"}` || c[0].ID != "call_1_0" {
		t.Fatalf("first turn: %+v", c)
	}
	if direct[1].Message.ToolCalls[0].ID != "mine" || direct[1].FinishReason != "tool_calls" {
		t.Fatalf("second turn: %+v", direct[1])
	}
	if direct[2].Message.Content != "Fixed." || direct[2].Usage != (Usage{Input: 7, Output: 3}) || direct[0].Usage.Input == 0 {
		t.Fatalf("usage: %+v / %+v", direct[2], direct[0].Usage)
	}
}

// TestRecordThenReplay records a scripted conversation and replays it; a
// replay must refuse a conversation that drifted from the recording and a
// request the recording never saw, rather than answer with stale replies.
func TestRecordThenReplay(t *testing.T) {
	script, _ := loadScript(scriptFile(t))
	rec := filepath.Join(t.TempDir(), "session.jsonl")
	recorded := conversation(t, &recordModel{Model: &scriptModel{script: script}, mu: new(sync.Mutex), path: rec})
	exchanges, _, err := loadRecording(rec)
	if err != nil || len(exchanges) != 3 {
		t.Fatalf("recording: %d exchanges, %v", len(exchanges), err)
	}
	if replayed := conversation(t, &replayModel{rec: exchanges}); !reflect.DeepEqual(recorded, replayed) {
		t.Fatalf("replay differs:\n%+v\n%+v", recorded, replayed)
	}
	m := &replayModel{rec: exchanges}
	_, err = m.Chat(context.Background(), turn(Message{Role: RoleSystem, Content: "fix calc and be brief"}, Message{Role: RoleUser, Content: "start"}))
	if err == nil || !strings.Contains(err.Error(), "request 1 no longer matches the recording: .messages[0].content") {
		t.Fatalf("drifted prompt: %v", err)
	}
	m = &replayModel{rec: exchanges[:1]}
	conv := []Message{{Role: RoleSystem, Content: "fix calc"}, {Role: RoleUser, Content: "start"}}
	first, err := m.Chat(context.Background(), turn(conv...))
	if err != nil {
		t.Fatal(err)
	}
	conv = append(conv, first.Message, Message{Role: RoleTool, ToolCallID: first.Message.ToolCalls[0].ID, Content: "ok read_file"})
	if _, err := m.Chat(context.Background(), turn(conv...)); err == nil || !strings.Contains(err.Error(), "request 2 was not recorded") {
		t.Fatalf("unrecorded request: %v", err)
	}
}

// TestModelsContinueAcrossAttempts: a retry loop builds a new attempt but
// must continue the script, not start it over.
func TestModelsContinueAcrossAttempts(t *testing.T) {
	var ms models
	p := scriptFile(t)
	a, err := ms.load("script:"+p, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ms.load("script:"+p, "")
	if a != b {
		t.Fatal("the same script loaded twice gave two models")
	}
	if _, err := ms.load("script:"+filepath.Join(t.TempDir(), "missing.yaml"), ""); err == nil {
		t.Fatal("a missing script loaded")
	}
}

// TestToolsDeclaredOnce: every declared tool is offered with a valid
// schema, runs (or stops the session), and validation knows exactly the
// declared names. DefaultTools hands out copies, so no caller can change
// another registry's defaults.
func TestToolsDeclaredOnce(t *testing.T) {
	specs := toolSpecsFor(DefaultTools())
	if len(specs) != len(builtinTools) {
		t.Fatalf("%d specs for %d tools", len(specs), len(builtinTools))
	}
	for _, s := range specs {
		var schema map[string]any
		if err := json.Unmarshal(s.Parameters, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s: %v", s.Name, s.Parameters, err)
		}
		tl, _ := lookupTool(s.Name)
		stop := s.Name == "finish" || s.Name == "handoff"
		if (tl.run == nil) != stop {
			t.Errorf("%s: runner %v, stop tool %v", s.Name, tl.run != nil, stop)
		}
	}
	d := DefaultTools()
	d[0] = "rm_rf"
	if DefaultTools()[0] != "read_file" {
		t.Fatal("changing the returned slice changed the defaults")
	}
	if is := checkTools([]string{"read_file", "rm_rf"}, nil); len(is) != 1 || !strings.Contains(is[0].msg, `unknown tool "rm_rf"`) {
		t.Fatalf("unknown tool: %v", is)
	}
	if is := checkTools(ToolNames(), nil); len(is) != 0 {
		t.Fatal(is)
	}
}
