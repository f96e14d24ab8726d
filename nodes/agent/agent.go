package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/internal/lines"
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
	// MCP calls also carry the server and the server's own tool name.
	AttrMCPMethod = attribute.Key("mcp.method.name")
	AttrMCPServer = attribute.Key("sandgate.mcp.server")
	AttrMCPTool   = attribute.Key("sandgate.mcp.tool")
)

// defaultModel is the model of agent nodes that name none.
const defaultModel = "gpt-4.1-mini"

// Options configure every agent node of a registry.
type Options struct {
	// Model, when set, overrides the blueprint's model for all agent nodes
	// (the CLI's --model): a model name, script:FILE or replay:FILE.
	Model string
	// Record, when set, appends every real model exchange to this file
	// for later replay.
	Record string
	// Provider, when set, answers every agent node's model calls instead
	// of an endpoint or an offline model (an embedder's own client, a test
	// double); Model then only names the model in requests. Record still
	// records its exchanges.
	Provider Model
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
	// Tools is the toolset of agent nodes whose blueprint names none
	// (default: every tool, DefaultTools). finish and handoff are always
	// added.
	Tools []string
	// Prices prices the model calls (default: cost.Defaults). A model
	// missing from it costs nothing, except under budget.cost, where
	// CheckPrices refuses the run and the node refuses to call it.
	Prices cost.Table

	models *models
}

// Type declares agent nodes, built with these options.
func Type(o Options) runtime.Type {
	k := blueprint.KindInt
	return runtime.Type{Spec: blueprint.Configured[Config](blueprint.NodeType{Name: "agent", Stage: "propose", Doc: "an LLM with a small toolset, working in the sandboxed workspace",
		Outputs: map[string]blueprint.Kind{"summary": blueprint.KindString, "turns": k, "tokens_in": k, "tokens_out": k,
			"tokens_cached": k, "cost": blueprint.KindFloat, "model": blueprint.KindString, "tool_calls": k}}), New: Factory(o)}
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
	servers     []MCPServer
}

var _ runtime.Node = (*Agent)(nil)

func newAgent(spec *blueprint.Node, o Options) (*Agent, error) {
	c, err := blueprint.Decode[Config](spec)
	if err != nil {
		return nil, err
	}
	a := &Agent{o: o, model: cmp.Or(o.Model, c.Model, defaultModel), tools: o.Tools, maxTurns: c.MaxTurns,
		maxTokens: c.MaxTokens, temperature: float32(c.Temperature), reqTimeout: c.RequestTimeout, file: spec.File}
	if len(a.tools) == 0 {
		a.tools = DefaultTools()
	}
	if err := a.endpoint(c.BaseURL, c.APIKeyEnv); err != nil {
		return nil, err
	}
	if len(c.Tools) > 0 {
		a.tools = c.Tools
	}
	servers, issues := parseMCP(c.MCP)
	if len(issues) > 0 {
		return nil, fmt.Errorf("mcp[%d]: %s", issues[0].index, issues[0].msg)
	}
	a.servers = servers
	// Config.Validate refused a blueprint's unknown tools before the factory
	// ran; the operator's default toolset is checked here.
	if issues := checkTools(a.tools, servers); len(issues) > 0 {
		return nil, fmt.Errorf("agent tools: %s", issues[0].msg)
	}
	a.tools = slices.Clone(a.tools) // the stop tools are appended below
	for _, must := range stopTools {
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

// chatModel picks the model for this attempt: the embedder's Provider,
// an offline script or recording, or the OpenAI-compatible endpoint with
// the key from the harness environment. Recording wraps any but a replay.
// It also returns the model name the requests carry.
func (a *Agent) chatModel() (Model, string, error) {
	var m Model
	name := a.model
	switch {
	case a.o.Provider != nil:
		m = a.o.Provider
	case offline(a.model):
		om, err := a.o.models.load(a.model, a.file)
		if err != nil {
			return nil, "", err
		}
		m, name = om, strings.SplitN(a.model, ":", 2)[0]
	default:
		key := a.o.Getenv(a.keyEnv)
		if key == "" {
			return nil, "", fmt.Errorf("model %s needs an API key in %s (or run offline with --model script:FILE)", a.model, a.keyEnv)
		}
		baseURL := a.baseURL
		if baseURL == "" {
			baseURL = a.o.Getenv("OPENAI_BASE_URL")
		}
		m = newOpenAIModel(baseURL, key, a.o.HTTPClient)
	}
	if a.o.Record != "" && !strings.HasPrefix(a.model, "replay:") {
		m = &recordModel{Model: m, mu: &a.o.models.recordMu, path: a.o.Record}
	}
	return m, name, nil
}

// Run implements runtime.Node: the tool loop.
func (a *Agent) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	exec, ok := ServiceExecutor.Get(in)
	if !ok || exec == nil {
		return nil, errors.New("agent: no sandbox in the run's services; agent tools never run unconfined")
	}
	tb := &toolbox{exec: exec, allowed: map[string]bool{}, timeout: in.Spec.Timeout}
	for _, t := range a.tools {
		tb.allowed[t] = true
	}
	client, model, err := a.chatModel()
	if err != nil {
		return nil, err
	}
	prompt, err := in.Render("prompt")
	if err != nil {
		return nil, err
	}
	// MCP servers start, and the toolset is checked against theirs,
	// before any model call.
	hub, ctx, stop, err := a.startMCP(ctx, in, exec, client)
	if err != nil {
		return nil, err
	}
	defer stop()
	specs := toolSpecsFor(a.tools)
	if hub != nil {
		specs = append(specs, hub.specs...)
		for n := range hub.tools {
			tb.allowed[n] = true
		}
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
	s := &session{a: a, in: in, tb: tb, hub: hub, specs: specs, client: client, model: model, tr: tr, tracer: trace.SpanFromContext(ctx).TracerProvider().Tracer("github.com/sandgate/sandgate/nodes/agent")}
	s.spend.price, s.spend.priced = a.o.prices().Lookup(priceName(a.model))
	s.spend.live = in.Spend
	if !s.spend.priced && in.Budget.Cost > 0 {
		return nil, fmt.Errorf("budget.cost is set but model %s has no price (--prices FILE)", a.model)
	}
	user := "Start working on the task now. Use the tools; call finish when the task is done or handoff if a person must take over."
	if in.Feedback != "" && !strings.Contains(prompt, in.Feedback) {
		user = "Your previous attempt did not pass the checks. Feedback:\n" + in.Feedback + "\n\n" + user
	}
	s.msgs = []Message{
		{Role: RoleSystem, Content: prompt + rulesPrompt(rules) + systemSuffix},
		{Role: RoleUser, Content: user},
	}
	return s.loop(ctx)
}

const systemSuffix = "\n\n# How you work\nYou work in a sandboxed copy of the repository. Read before you edit. Make the smallest change that does the task; prefer edit_file with exact text to rewriting files. Gates (lint, tests, diff size) judge your change after you finish; their feedback comes back to you if they fail."

// session is one agent attempt's conversation.
type session struct {
	a            *Agent
	in           *runtime.Input
	tb           *toolbox
	hub          *mcpHub // nil without MCP tools
	specs        []ToolSpec
	client       Model
	model        string
	tr           *transcript
	tracer       trace.Tracer
	msgs         []Message
	turns, calls int
	spend        spend
}

func (s *session) result(outcome runtime.Outcome, summary, reason string) *runtime.Result {
	// The model wrote these: bounded here, at the source, to what a
	// reason or a summary needs; transcript.jsonl has them whole.
	summary = runtime.CutText(s.in.Redactor.String(summary), runtime.MaxText, "transcript.jsonl")
	reason = runtime.CutText(s.in.Redactor.String(reason), runtime.MaxText, "transcript.jsonl")
	sp := s.spend
	return &runtime.Result{Outcome: outcome, Tokens: sp.in + sp.out, Cost: sp.usd, Reason: reason,
		Feedback: summary, Artifacts: []string{"transcript.jsonl"},
		Outputs: map[string]any{"summary": summary, "turns": s.turns, "tokens_in": sp.in, "tokens_out": sp.out,
			"tokens_cached": sp.hit, "cost": sp.usd, "model": s.model, "tool_calls": s.calls}}
}

func (s *session) loop(ctx context.Context) (*runtime.Result, error) {
	for s.turns < s.a.maxTurns {
		if s.a.maxTokens > 0 && s.spend.in+s.spend.out >= s.a.maxTokens {
			return s.result(runtime.OutcomeFail, "", fmt.Sprintf("agent used its %d-token allowance", s.a.maxTokens)), nil
		}
		req := Request{Model: s.model, Messages: s.msgs, Tools: s.specs, Temperature: s.a.temperature}
		if why := s.spend.overBudget(s.in, req); why != "" {
			s.tr.add("handoff", map[string]any{"reason": why})
			return s.result(runtime.OutcomeHandoff, why, why), nil
		}
		s.turns++
		msg, err := s.complete(ctx, req)
		if err != nil {
			// The result carries what was spent: the run counts it
			// against its budget even though the attempt broke.
			return s.result(runtime.OutcomeFail, "", err.Error()), err
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
				return s.result(runtime.OutcomeFail, "", err.Error()), err
			}
			s.msgs = append(s.msgs, Message{Role: RoleTool, ToolCallID: call.ID, Content: out})
		}
	}
	return s.result(runtime.OutcomeFail, "", fmt.Sprintf("agent reached max_turns (%d) without finishing", s.a.maxTurns)), nil
}

// stopCall handles finish and handoff; other calls return nil.
func (s *session) stopCall(call ToolCall) *runtime.Result {
	var args map[string]any
	_ = json.Unmarshal([]byte(call.Arguments), &args)
	switch call.Name {
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

func (s *session) complete(ctx context.Context, req Request) (Message, error) {
	ctx, span := s.tracer.Start(ctx, "chat "+s.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		AttrGenAISystem.String("openai"), AttrGenAIOperation.String("chat"), AttrGenAIRequestModel.String(s.model)))
	defer span.End()
	rctx, cancel := context.WithTimeout(ctx, s.a.reqTimeout)
	defer cancel()
	s.tr.request(s.turns, s.msgs, req.Tools)
	resp, err := s.client.Chat(rctx, req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return Message{}, fmt.Errorf("model call failed after retries: %w", err)
	}
	s.spend.add(resp.Usage, req)
	span.SetAttributes(AttrGenAIResponseID.String(resp.ID), AttrGenAIInputTokens.Int(resp.Usage.Input), AttrGenAIOutputTokens.Int(resp.Usage.Output))
	if resp.FinishReason != "" {
		span.SetAttributes(AttrGenAIFinish.StringSlice([]string{resp.FinishReason}))
	}
	s.tr.completion(s.turns, resp)
	return resp.Message, nil
}

func (s *session) tool(ctx context.Context, call ToolCall) (string, error) {
	ctx, span := s.tracer.Start(ctx, "execute_tool "+call.Name, trace.WithAttributes(
		AttrGenAIOperation.String("execute_tool"), AttrGenAIToolName.String(call.Name), AttrGenAIToolCallID.String(call.ID)))
	defer span.End()
	entry := map[string]any{"turn": s.turns, "id": call.ID, "name": call.Name, "arguments": call.Arguments}
	var out string
	if t, ok := s.mcpTool(call.Name); ok {
		span.SetAttributes(AttrMCPServer.String(t.server), AttrMCPTool.String(t.tool), AttrMCPMethod.String("tools/call"))
		entry["mcp_server"], entry["mcp_tool"] = t.server, t.tool
		out = s.hub.call(ctx, t, call.Arguments)
	} else {
		var err error
		if out, err = s.tb.call(ctx, call.Name, call.Arguments); err != nil {
			span.RecordError(err)
			return "", err
		}
	}
	if strings.HasPrefix(out, "error:") {
		span.SetStatus(codes.Error, lines.First(out))
	}
	// A credential the operator let into the box must not travel on to
	// the model provider or the transcript through command output.
	out = s.in.Redactor.String(out)
	entry["result"] = out
	s.tr.add("tool", entry)
	return out, nil
}

// mcpTool finds an MCP tool by the name the model sees.
func (s *session) mcpTool(name string) (mcpTool, bool) {
	if s.hub == nil {
		return mcpTool{}, false
	}
	t, ok := s.hub.tools[name]
	return t, ok
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
