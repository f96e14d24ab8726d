package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"
)

// scriptReply is one assistant turn of a script file.
type scriptReply struct {
	Content   string `yaml:"content" json:"content"`
	ToolCalls []struct {
		ID       string `yaml:"id" json:"id"`
		Function struct {
			Name      string `yaml:"name" json:"name"`
			Arguments any    `yaml:"arguments" json:"arguments"`
		} `yaml:"function" json:"function"`
	} `yaml:"tool_calls" json:"tool_calls"`
	// Usage, when set, is what the turn reports spending (default:
	// scriptUsage).
	Usage *struct {
		PromptTokens     int `yaml:"prompt_tokens" json:"prompt_tokens"`
		CompletionTokens int `yaml:"completion_tokens" json:"completion_tokens"`
		CachedTokens     int `yaml:"cached_tokens" json:"cached_tokens"`
	} `yaml:"usage" json:"usage"`
}

// loadScript reads a YAML or JSON list of assistant replies.
func loadScript(path string) ([]scriptReply, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model script: %w", err)
	}
	var replies []scriptReply
	if err := yaml.Unmarshal(b, &replies); err != nil {
		return nil, fmt.Errorf("model script %s: %w", path, err)
	}
	return replies, nil
}

// scriptModel plays a script's replies in order, whatever it is asked.
// Once they run out it answers with an error, ErrScriptEnded: the agent's
// attempt breaks with that reason rather than "finish" with nothing done
// and pass its node.
type scriptModel struct {
	mu     sync.Mutex
	path   string
	script []scriptReply
	next   int
}

// ErrScriptEnded is the error a scripted model answers with once its
// replies have run out.
var ErrScriptEnded = errors.New("the model script has no replies left")

// Chat implements Model.
func (m *scriptModel) Chat(_ context.Context, req Request) (*Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next >= len(m.script) {
		return nil, fmt.Errorf("%s: %w (all %d played; a script must end with a finish or handoff call)", m.path, ErrScriptEnded, len(m.script))
	}
	reply := m.script[m.next]
	m.next++
	msg := Message{Role: RoleAssistant, Content: reply.Content}
	for i, tc := range reply.ToolCalls {
		args, ok := tc.Function.Arguments.(string)
		if !ok {
			b, _ := json.Marshal(normalizeYAML(tc.Function.Arguments))
			args = string(b)
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", m.next, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: args})
	}
	resp := &Response{ID: fmt.Sprintf("script-%d", m.next), Message: msg, Usage: scriptUsage(req), FinishReason: string(openai.FinishReasonStop)}
	if reply.Usage != nil {
		resp.Usage = Usage{Input: reply.Usage.PromptTokens, Output: reply.Usage.CompletionTokens, Cached: reply.Usage.CachedTokens}
	}
	if len(msg.ToolCalls) > 0 {
		resp.FinishReason = string(openai.FinishReasonToolCalls)
	}
	return resp, nil
}

// scriptUsage is what a reply without usage: reports. Input is a quarter
// of the bytes the harness sent (measured on the wire form, so offline
// runs count what they counted when scripts were served over HTTP): a
// model is charged for its prompt. Output is a nominal scriptOutput
// tokens, whatever the reply's length: a script is no model's work, and a
// test's 9 MiB reply must not pass for millions of tokens spent and end
// its run on the token budget instead of where the test aims it.
func scriptUsage(req Request) Usage {
	body, _ := json.Marshal(wireRequest(req))
	return Usage{Input: len(body) / 4, Output: scriptOutput}
}

// scriptOutput is the output tokens of a script reply without usage:.
const scriptOutput = 100

// normalizeYAML turns YAML maps into JSON-encodable ones.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeYAML(x)
		}
	case map[any]any:
		m := map[string]any{}
		for k, x := range t {
			m[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return m
	case []any:
		for i := range t {
			t[i] = normalizeYAML(t[i])
		}
	}
	return v
}
