package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/secrets"
)

// GenAI semantic-convention attribute names, defined here because
// OpenTelemetry's semconv package dropped them from its newest versions.
const (
	AttrGenAISystem       = attribute.Key("gen_ai.system")
	AttrGenAIOperation    = attribute.Key("gen_ai.operation.name")
	AttrGenAIRequestModel = attribute.Key("gen_ai.request.model")
	AttrGenAIResponseID   = attribute.Key("gen_ai.response.id")
	AttrGenAIInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	AttrGenAIOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	AttrGenAIFinish       = attribute.Key("gen_ai.response.finish_reasons")
	AttrGenAIToolName     = attribute.Key("gen_ai.tool.name")
	AttrGenAIToolCallID   = attribute.Key("gen_ai.tool.call.id")
)

// Options configure every agent node of a registry.
type Options struct {
	// Model, when set, overrides the blueprint's model for all agent nodes
	// (the CLI's --model): a model name, script:FILE or replay:FILE.
	Model string
	// Record, when set, appends every real model exchange to this file
	// for later replay.
	Record string
	// HTTPClient is the base client for model calls (default: a client
	// with a sane timeout); retries wrap it.
	HTTPClient *http.Client
	// Getenv reads the harness environment for API keys (default
	// os.Getenv). Keys never enter the sandbox.
	Getenv func(string) string
	// BaseURL is the operator's model endpoint (the CLI's --base-url;
	// default OPENAI_BASE_URL, then OpenAI).
	BaseURL string
	// APIKeyEnv names the variable holding the operator's key (the CLI's
	// --api-key-env; default OPENAI_API_KEY). Name it in runtime.Runtime's
	// Secrets too when the name does not look like a credential.
	APIKeyEnv string
	// AllowEndpoints lists the endpoints a blueprint may name in base_url,
	// with its own api_key_env. A blueprint that sets either field for any
	// other endpoint is refused before any request: a key never goes to an
	// endpoint the operator did not name.
	AllowEndpoints []string

	models *models
}

// Factory returns the runtime factory for agent nodes with these options.
func Factory(o Options) runtime.Factory {
	o.models = &models{}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return func(spec *blueprint.Node) (runtime.Node, error) { return newAgent(spec, o) }
}

// Agent is the agent node.
type Agent struct {
	o           Options
	model       string
	baseURL     string
	keyEnv      string
	tools       []string
	maxTurns    int
	maxTokens   int
	temperature float32
	reqTimeout  time.Duration
	file        string
}

var _ runtime.Node = (*Agent)(nil)

func newAgent(spec *blueprint.Node, o Options) (*Agent, error) {
	c, err := blueprint.Decode[Config](spec)
	if err != nil {
		return nil, err
	}
	a := &Agent{o: o, model: cmp.Or(o.Model, c.Model, "gpt-4.1-mini"), tools: DefaultTools, maxTurns: c.MaxTurns,
		maxTokens: c.MaxTokens, temperature: float32(c.Temperature), reqTimeout: c.RequestTimeout, file: spec.File}
	if err := a.endpoint(c.BaseURL, c.APIKeyEnv); err != nil {
		return nil, err
	}
	if len(c.Tools) > 0 {
		a.tools = c.Tools
	}
	// Config.Validate refused unknown tools before the factory ran.
	for _, must := range []string{"finish", "handoff"} {
		if !slices.Contains(a.tools, must) {
			a.tools = append(a.tools, must)
		}
	}
	return a, nil
}

// endpoint decides where the key goes and which key: the operator's
// endpoint and key, or the blueprint's when the operator allowed that
// endpoint. The blueprint loader refuses the same blueprints with
// positions; this check holds for blueprints that did not come through it.
func (a *Agent) endpoint(bpURL, bpKey string) error {
	a.baseURL, a.keyEnv = a.o.BaseURL, a.o.APIKeyEnv
	switch {
	case bpURL != "" && !secrets.EndpointAllowed(bpURL, a.o.AllowEndpoints):
		return fmt.Errorf("base_url: the blueprint would send a credential to %s; credentials go only to endpoints the operator names (--base-url) or allows (--allow-endpoint %s)", bpURL, bpURL)
	case bpURL != "":
		a.baseURL = bpURL
		if bpKey != "" {
			a.keyEnv = bpKey
		}
	case bpKey != "":
		return fmt.Errorf("api_key_env: the blueprint picks %s as the key for the operator's endpoint; the operator chooses the key (--api-key-env %s), or the blueprint also sets an endpoint the operator allows (--allow-endpoint URL)", bpKey, bpKey)
	}
	if a.keyEnv == "" {
		a.keyEnv = "OPENAI_API_KEY"
	}
	return nil
}

// client builds the model client for this attempt.
func (a *Agent) client(ctx context.Context) (*openai.Client, string, error) {
	model, baseURL, key := a.model, a.baseURL, ""
	if strings.HasPrefix(model, "script:") || strings.HasPrefix(model, "replay:") {
		u, err := a.o.models.endpoint(ctx, model, a.file)
		if err != nil {
			return nil, "", err
		}
		baseURL, key, model = u, "offline", strings.SplitN(model, ":", 2)[0]
	} else {
		key = a.o.Getenv(a.keyEnv)
		if key == "" {
			return nil, "", fmt.Errorf("model %s needs an API key in %s (or run offline with --model script:FILE)", model, a.keyEnv)
		}
		if baseURL == "" {
			baseURL = a.o.Getenv("OPENAI_BASE_URL")
		}
	}
	cfg := openai.DefaultConfig(key)
	if baseURL != "" {
		cfg.BaseURL = baseURL
	}
	base := a.o.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	var rt http.RoundTripper = base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if a.o.Record != "" && !strings.HasPrefix(a.model, "replay:") {
		rt = &recordTransport{base: rt, path: a.o.Record}
	}
	cfg.HTTPClient = &http.Client{Transport: &retryTransport{base: rt, attempts: 5, maxWait: 30 * time.Second}, Timeout: 0}
	return openai.NewClientWithConfig(cfg), model, nil
}

// Run implements runtime.Node: the tool loop.
func (a *Agent) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	exec, ok := in.Services[ServiceExecutor].(Executor)
	if !ok {
		return nil, errors.New("agent: no sandbox in the run's services; agent tools never run unconfined")
	}
	tb := &toolbox{exec: exec, allowed: map[string]bool{}, timeout: in.Spec.Timeout}
	for _, t := range a.tools {
		tb.allowed[t] = true
	}
	client, model, err := a.client(ctx)
	if err != nil {
		return nil, err
	}
	prompt, err := in.Render("prompt")
	if err != nil {
		return nil, err
	}
	rules, err := tb.loadRules(ctx)
	if err != nil {
		return nil, err
	}
	var ruleFiles []string
	for _, r := range rules {
		ruleFiles = append(ruleFiles, r.Path)
	}
	trace.SpanFromContext(ctx).SetAttributes(attribute.StringSlice("sandgate.agent.rules", ruleFiles))
	tr := newTranscript(in)
	defer tr.close()
	s := &session{a: a, in: in, tb: tb, client: client, model: model, tr: tr, tracer: trace.SpanFromContext(ctx).TracerProvider().Tracer("github.com/sandgate/sandgate/nodes/agent")}
	user := "Start working on the task now. Use the tools; call finish when the task is done or handoff if a person must take over."
	if in.Feedback != "" && !strings.Contains(prompt, in.Feedback) {
		user = "Your previous attempt did not pass the checks. Feedback:\n" + in.Feedback + "\n\n" + user
	}
	s.msgs = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: prompt + rulesPrompt(rules) + systemSuffix},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
	return s.loop(ctx)
}

const systemSuffix = "\n\n# How you work\nYou work in a sandboxed copy of the repository. Read before you edit. Make the smallest change that does the task; prefer edit_file with exact text to rewriting files. Gates (lint, tests, diff size) judge your change after you finish; their feedback comes back to you if they fail."

// session is one agent attempt's conversation.
type session struct {
	a                   *Agent
	in                  *runtime.Input
	tb                  *toolbox
	client              *openai.Client
	model               string
	tr                  *transcript
	tracer              trace.Tracer
	msgs                []openai.ChatCompletionMessage
	turns, calls        int
	tokensIn, tokensOut int
}

func (s *session) result(outcome runtime.Outcome, summary, reason string) *runtime.Result {
	return &runtime.Result{Outcome: outcome, Tokens: s.tokensIn + s.tokensOut, Reason: reason,
		Feedback: summary, Artifacts: []string{"transcript.jsonl"},
		Outputs: map[string]any{"summary": summary, "turns": s.turns, "tokens_in": s.tokensIn, "tokens_out": s.tokensOut, "tool_calls": s.calls}}
}

func (s *session) loop(ctx context.Context) (*runtime.Result, error) {
	for s.turns < s.a.maxTurns {
		if s.a.maxTokens > 0 && s.tokensIn+s.tokensOut >= s.a.maxTokens {
			return s.result(runtime.OutcomeFail, "", fmt.Sprintf("agent used its %d-token allowance", s.a.maxTokens)), nil
		}
		s.turns++
		msg, err := s.complete(ctx)
		if err != nil {
			return nil, err
		}
		s.msgs = append(s.msgs, msg)
		if len(msg.ToolCalls) == 0 {
			return s.result(runtime.OutcomePass, strings.TrimSpace(msg.Content), ""), nil
		}
		for _, call := range msg.ToolCalls {
			s.calls++
			if res := s.stopCall(call); res != nil {
				return res, nil
			}
			out, err := s.tool(ctx, call)
			if err != nil {
				return nil, err
			}
			s.msgs = append(s.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: out})
		}
	}
	return s.result(runtime.OutcomeFail, "", fmt.Sprintf("agent reached max_turns (%d) without finishing", s.a.maxTurns)), nil
}

// stopCall handles finish and handoff; other calls return nil.
func (s *session) stopCall(call openai.ToolCall) *runtime.Result {
	var args map[string]any
	_ = json.Unmarshal([]byte(call.Function.Arguments), &args)
	switch call.Function.Name {
	case "finish":
		summary, _ := args["summary"].(string)
		s.tr.add("finish", args)
		return s.result(runtime.OutcomePass, summary, "")
	case "handoff":
		reason, _ := args["reason"].(string)
		s.tr.add("handoff", args)
		return s.result(runtime.OutcomeHandoff, reason, orDefault(reason, "the agent asked for a person"))
	}
	return nil
}

func (s *session) complete(ctx context.Context) (openai.ChatCompletionMessage, error) {
	ctx, span := s.tracer.Start(ctx, "chat "+s.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		AttrGenAISystem.String("openai"), AttrGenAIOperation.String("chat"), AttrGenAIRequestModel.String(s.model)))
	defer span.End()
	rctx, cancel := context.WithTimeout(ctx, s.a.reqTimeout)
	defer cancel()
	req := openai.ChatCompletionRequest{Model: s.model, Messages: s.msgs, Tools: toolDefs(s.a.tools), Temperature: s.a.temperature}
	s.tr.add("request", map[string]any{"turn": s.turns, "messages": len(s.msgs)})
	resp, err := s.client.CreateChatCompletion(rctx, req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return openai.ChatCompletionMessage{}, fmt.Errorf("model call failed after retries: %w", err)
	}
	s.tokensIn += resp.Usage.PromptTokens
	s.tokensOut += resp.Usage.CompletionTokens
	span.SetAttributes(AttrGenAIResponseID.String(resp.ID), AttrGenAIInputTokens.Int(resp.Usage.PromptTokens), AttrGenAIOutputTokens.Int(resp.Usage.CompletionTokens))
	if len(resp.Choices) == 0 {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "(the model returned no choices)"}, nil
	}
	ch := resp.Choices[0]
	span.SetAttributes(AttrGenAIFinish.StringSlice([]string{string(ch.FinishReason)}))
	s.tr.add("completion", ch.Message)
	return ch.Message, nil
}

func (s *session) tool(ctx context.Context, call openai.ToolCall) (string, error) {
	ctx, span := s.tracer.Start(ctx, "execute_tool "+call.Function.Name, trace.WithAttributes(
		AttrGenAIOperation.String("execute_tool"), AttrGenAIToolName.String(call.Function.Name), AttrGenAIToolCallID.String(call.ID)))
	defer span.End()
	out, err := s.tb.call(ctx, call.Function.Name, call.Function.Arguments)
	if err != nil {
		span.RecordError(err)
		return "", err
	}
	if strings.HasPrefix(out, "error:") {
		span.SetStatus(codes.Error, firstLine(out))
	}
	// A credential the operator let into the box must not travel on to
	// the model provider or the transcript through command output.
	out = s.in.Redactor.String(out)
	s.tr.add("tool", map[string]any{"name": call.Function.Name, "arguments": call.Function.Arguments, "result": out})
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// transcript records prompts, completions and tool calls in the attempt
// directory rather than in span attributes.
type transcript struct {
	f *os.File
	w io.Writer // f, redacting credentials
}

func newTranscript(in *runtime.Input) *transcript {
	dir, err := in.MkDir()
	if err != nil {
		return &transcript{}
	}
	f, err := os.Create(filepath.Join(dir, "transcript.jsonl"))
	if err != nil {
		return &transcript{}
	}
	return &transcript{f: f, w: in.Redactor.Writer(f)}
}

func (t *transcript) add(kind string, v any) {
	if t.f == nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"time": time.Now().UTC(), "kind": kind, "data": v})
	_, _ = t.w.Write(append(b, '\n'))
}

func (t *transcript) close() {
	if t.f != nil {
		t.f.Close()
	}
}
