package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"
)

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

// recordTransport appends every exchange to a file, for replay.
type recordTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	path string
}

// exchange is one recorded request and response.
type exchange struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

func (t *recordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(out))
	line, _ := json.Marshal(exchange{Request: compactJSON(body), Response: compactJSON(out)})
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ferr := os.OpenFile(t.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return resp, nil
	}
	defer f.Close()
	f.Write(append(line, '\n'))
	return resp, nil
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		q, _ := json.Marshal(string(b))
		return q
	}
	return buf.Bytes()
}

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
	Usage *openai.Usage `yaml:"usage" json:"usage"`
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

// fakeServer is an OpenAI-compatible chat endpoint on loopback that plays
// a script or a recording.
type fakeServer struct {
	mu       sync.Mutex
	script   []scriptReply
	replay   []exchange
	next     int
	srv      *http.Server
	url      string
	requests int
}

func startFake(script []scriptReply, replay []exchange) (*fakeServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeServer{script: script, replay: replay, url: "http://" + ln.Addr().String() + "/v1"}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	return f, nil
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	w.Header().Set("Content-Type", "application/json")
	if f.replay != nil {
		f.serveReplay(w, body)
		return
	}
	var reply scriptReply
	if f.next < len(f.script) {
		reply = f.script[f.next]
		f.next++
	} else {
		reply.Content = "The script has no more replies; finishing."
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply.Content}
	for i, tc := range reply.ToolCalls {
		args, ok := tc.Function.Arguments.(string)
		if !ok {
			b, _ := json.Marshal(normalizeYAML(tc.Function.Arguments))
			args = string(b)
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", f.next, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: args}})
	}
	usage := openai.Usage{PromptTokens: len(body) / 4, CompletionTokens: max(1, (len(reply.Content)+len(fmt.Sprint(msg.ToolCalls)))/4)}
	if reply.Usage != nil {
		usage = *reply.Usage
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	finish := openai.FinishReasonStop
	if len(msg.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	json.NewEncoder(w).Encode(openai.ChatCompletionResponse{ID: fmt.Sprintf("script-%d", f.next), Object: "chat.completion",
		Created: 0, Model: "script", Usage: usage,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: finish}}})
}

// serveReplay answers with the recorded response when the request matches
// the recorded one, and fails loudly when it does not.
func (f *fakeServer) serveReplay(w http.ResponseWriter, body []byte) {
	if f.next >= len(f.replay) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, fmt.Sprintf("replay: request %d was not recorded (the recording has %d)", f.next+1, len(f.replay)))
		return
	}
	want := f.replay[f.next]
	if d := diffJSON(want.Request, compactJSON(body)); d != "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, fmt.Sprintf("replay: request %d no longer matches the recording: %s", f.next+1, d))
		return
	}
	f.next++
	w.Write(want.Response)
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

func loadRecording(path string) ([]exchange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var out []exchange
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e exchange
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("replay %s:%d: %w", path, i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// resolvePath finds a script file relative to the blueprint, then the
// working directory.
func resolvePath(p, blueprintFile string) string {
	if filepath.IsAbs(p) || blueprintFile == "" {
		return p
	}
	if c := filepath.Join(filepath.Dir(blueprintFile), p); fileExists(c) {
		return c
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// models starts fake servers once per script or recording and keeps them
// for the life of the Options, so a retry loop continues the script.
type models struct {
	mu      sync.Mutex
	servers map[string]*fakeServer
}

func (m *models) endpoint(ctx context.Context, model, blueprintFile string) (string, error) {
	kind, path, _ := strings.Cut(model, ":")
	path = resolvePath(path, blueprintFile)
	key := kind + ":" + path
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.servers[key]; ok {
		return s.url, nil
	}
	var s *fakeServer
	var err error
	if kind == "script" {
		var script []scriptReply
		if script, err = loadScript(path); err == nil {
			s, err = startFake(script, nil)
		}
	} else {
		var rec []exchange
		if rec, err = loadRecording(path); err == nil {
			s, err = startFake(nil, rec)
		}
	}
	if err != nil {
		return "", err
	}
	if m.servers == nil {
		m.servers = map[string]*fakeServer{}
	}
	m.servers[key] = s
	return s.url, nil
}
