package agent

import (
	"context"
	"encoding/json"
)

// Model is the agent's view of a language model: one chat turn with tools.
// The OpenAI-compatible HTTP client is one implementation; the offline
// script and replay models answer in process. Implementations must be safe
// for concurrent use: parallel agent nodes of a run share one model.
type Model interface {
	// Chat sends the conversation so far and the tools on offer, and
	// returns the assistant's next message. An error means the call failed
	// for good (implementations retry transient failures themselves).
	Chat(ctx context.Context, req Request) (*Response, error)
}

// Request is one chat turn.
type Request struct {
	// Model names the model at the endpoint ("script" or "replay" offline).
	Model       string
	Messages    []Message
	Tools       []ToolSpec
	Temperature float32
}

// Response is the assistant's answer to one Request.
type Response struct {
	// ID is the provider's id of the completion, for traces.
	ID      string
	Message Message
	Usage   Usage
	// FinishReason is why the model stopped ("stop", "tool_calls", ...).
	FinishReason string
}

// Usage counts the tokens one call spent.
type Usage struct {
	Input  int
	Output int
	// Cached are the input tokens the provider served from its prompt
	// cache (OpenAI's prompt_tokens_details.cached_tokens), part of Input.
	Cached int
}

// Roles of the messages of a conversation.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation. Its JSON form is the
// OpenAI wire form, which transcripts record.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are an assistant message's requested calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one call the model asks for; Arguments is a JSON object as
// text, exactly as the model wrote it (it may be malformed).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// wireCall is the OpenAI JSON form of a tool call.
type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON writes the OpenAI wire form.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	w := wireCall{ID: c.ID, Type: "function"}
	w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
	return json.Marshal(w)
}

// UnmarshalJSON reads the OpenAI wire form.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments}
	return nil
}

// ToolSpec offers one tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
}
