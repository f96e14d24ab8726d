package agent

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// openAIModel is a Model behind an OpenAI-compatible chat endpoint.
type openAIModel struct {
	client *openai.Client
}

// newOpenAIModel builds the client for one endpoint and key. base is the
// caller's HTTP client (nil: the default); 429 and 5xx answers are retried
// a bounded number of times on top of it.
func newOpenAIModel(baseURL, key string, base *http.Client) *openAIModel {
	cfg := openai.DefaultConfig(key)
	if baseURL != "" {
		cfg.BaseURL = baseURL
	}
	var rt http.RoundTripper
	if base != nil {
		rt = base.Transport
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	cfg.HTTPClient = &http.Client{Transport: &retryTransport{base: rt, attempts: 5, maxWait: 30 * time.Second}, Timeout: 0}
	return &openAIModel{client: openai.NewClientWithConfig(cfg)}
}

// Chat implements Model.
func (m *openAIModel) Chat(ctx context.Context, req Request) (*Response, error) {
	resp, err := m.client.CreateChatCompletion(ctx, wireRequest(req))
	if err != nil {
		return nil, err
	}
	return fromWire(resp), nil
}

// wireRequest is req in go-openai's form; its JSON is the request body,
// which recordings store and replays compare.
func wireRequest(req Request) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCalls: wireCalls(m.ToolCalls), ToolCallID: m.ToolCallID}
	}
	var tools []openai.Tool
	for _, t := range req.Tools {
		tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return openai.ChatCompletionRequest{Model: req.Model, Messages: msgs, Tools: tools, Temperature: req.Temperature}
}

func wireCalls(calls []ToolCall) []openai.ToolCall {
	var out []openai.ToolCall
	for _, c := range calls {
		out = append(out, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// fromWire reads a completion; an answer without choices becomes a plain
// message saying so, which ends the agent's turn.
func fromWire(resp openai.ChatCompletionResponse) *Response {
	out := &Response{ID: resp.ID, Usage: Usage{Input: resp.Usage.PromptTokens, Output: resp.Usage.CompletionTokens}}
	if d := resp.Usage.PromptTokensDetails; d != nil {
		out.Usage.Cached = d.CachedTokens
	}
	if len(resp.Choices) == 0 {
		out.Message = Message{Role: RoleAssistant, Content: "(the model returned no choices)"}
		return out
	}
	ch := resp.Choices[0]
	out.FinishReason = string(ch.FinishReason)
	out.Message = Message{Role: ch.Message.Role, Content: ch.Message.Content, ToolCallID: ch.Message.ToolCallID}
	for _, c := range ch.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return out
}

// toWire is resp as an OpenAI completion, as recordings store it.
func toWire(resp *Response) openai.ChatCompletionResponse {
	m := resp.Message
	var details *openai.PromptTokensDetails
	if resp.Usage.Cached > 0 {
		details = &openai.PromptTokensDetails{CachedTokens: resp.Usage.Cached}
	}
	return openai.ChatCompletionResponse{ID: resp.ID, Object: "chat.completion",
		Usage: openai.Usage{PromptTokens: resp.Usage.Input, CompletionTokens: resp.Usage.Output, TotalTokens: resp.Usage.Input + resp.Usage.Output, PromptTokensDetails: details},
		Choices: []openai.ChatCompletionChoice{{Index: 0, FinishReason: openai.FinishReason(resp.FinishReason),
			Message: openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCalls: wireCalls(m.ToolCalls), ToolCallID: m.ToolCallID}}}}
}

// retryTransport retries 429 and 5xx answers with backoff, honouring
// Retry-After, a bounded number of times.
type retryTransport struct {
	base     http.RoundTripper
	attempts int
	maxWait  time.Duration
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		body = b
	}
	var resp *http.Response
	var err error
	for i := 0; i < t.attempts; i++ {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		resp, err = t.base.RoundTrip(r)
		if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500) || i == t.attempts-1 {
			return resp, err
		}
		wait := retryAfter(resp.Header.Get("Retry-After"), time.Duration(float64(500*time.Millisecond)*math.Pow(2, float64(i))))
		if wait > t.maxWait {
			wait = t.maxWait
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-time.After(wait):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return resp, err
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h string, def time.Duration) time.Duration {
	if h == "" {
		return def
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return time.Until(t)
	}
	return def
}
