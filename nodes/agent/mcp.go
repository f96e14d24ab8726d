package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Starter runs long-lived commands in the run's box; the run's executor
// implements it. Hold keeps the box shared for a whole session (a server
// in the box may write at any time, so a gate must wait for the session to
// end) and returns the context the session's own commands run under.
type Starter interface {
	Start(ctx context.Context, c sandbox.Command) (*sandbox.Process, error)
	Hold(ctx context.Context) (context.Context, func(), error)
}

// ServiceProxy is the Input.Services key of the run's egress proxy socket
// (absent without sandbox.network: allowlist): the only way to an HTTP
// MCP server.
var ServiceProxy = runtime.NewServiceKey[string]("sandgate.proxy")

// Bounds on what MCP servers put in front of the model on every call: a
// description is cut, while a schema past its cap or a toolset past
// maxMCPTools (the most OpenAI's API accepts in one request) refuses the
// session, since a cut schema or a dropped tool would mislead the model.
const (
	maxMCPDescription = 2 << 10
	maxMCPSchema      = 16 << 10
	maxMCPTools       = 128
)

// mcpTool is one MCP tool offered to the model.
type mcpTool struct {
	server, tool string
	spec         ToolSpec
}

// mcpHub is an agent session's MCP servers and the tools it offers.
type mcpHub struct {
	conns map[string]mcpCaller
	tools map[string]mcpTool // by the name the model sees
	specs []ToolSpec
}

// mcpCaller is a connected server, live or replayed.
type mcpCaller interface {
	tools() []*mcp.Tool
	call(ctx context.Context, tool string, args map[string]any) (string, error)
	close()
}

// validName is what OpenAI-compatible APIs accept as a function name.
var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// modelName is how the model sees server.tool: server__tool, with
// characters function names cannot hold replaced.
func modelName(server, tool string) string {
	return server + "__" + regexp.MustCompile(`[^a-zA-Z0-9_-]`).ReplaceAllString(tool, "_")
}

// resolve picks the tools the node's list names from the servers' lists;
// a name no server has fails with the closest one.
func (h *mcpHub) resolve(entries []string) error {
	h.tools = map[string]mcpTool{}
	for _, e := range entries {
		server, name, isMCP := splitMCPTool(e)
		if !isMCP {
			continue
		}
		conn := h.conns[server]
		var have []string
		matched := false
		for _, t := range conn.tools() {
			have = append(have, server+"."+t.Name)
			if name != "*" && t.Name != name {
				continue
			}
			matched = true
			if err := h.add(server, t); err != nil {
				return err
			}
		}
		if !matched && name != "*" {
			hint := blueprint.Suggest(e, have)
			if hint == "" {
				hint = " (it has: " + strings.Join(have, ", ") + ")"
			}
			return fmt.Errorf("tools: MCP server %s has no tool %q%s", server, name, hint)
		}
	}
	if len(h.tools) > maxMCPTools {
		return fmt.Errorf("tools: the MCP tools named (%s) come to %d, more than the %d a model is offered; name the tools the node needs instead of server.*", strings.Join(entries, ", "), len(h.tools), maxMCPTools)
	}
	names := make([]string, 0, len(h.tools))
	for n := range h.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h.specs = append(h.specs, h.tools[n].spec)
	}
	return nil
}

func (h *mcpHub) add(server string, t *mcp.Tool) error {
	name := modelName(server, t.Name)
	if !validName.MatchString(name) {
		return fmt.Errorf("tools: MCP tool %s.%s: the name the model would see (%s) is longer than 64 characters", server, t.Name, name)
	}
	if old, dup := h.tools[name]; dup && old.tool != t.Name {
		return fmt.Errorf("tools: MCP tools %s.%s and %s.%s both reach the model as %s", server, old.tool, server, t.Name, name)
	}
	params, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		params = []byte(`{"type":"object"}`)
	}
	if len(params) > maxMCPSchema {
		return fmt.Errorf("tools: MCP tool %s.%s: its input schema is %d bytes, more than the %d offered to a model", server, t.Name, len(params), maxMCPSchema)
	}
	desc := t.Description
	if len(desc) > maxMCPDescription {
		desc = desc[:maxMCPDescription] + " [description truncated]"
	}
	h.tools[name] = mcpTool{server: server, tool: t.Name, spec: ToolSpec{Name: name, Description: desc, Parameters: params}}
	return nil
}

// call carries out one call; every failure (a bad argument, a timeout, a
// crashed server, a malformed result) is a tool error for the model.
func (h *mcpHub) call(ctx context.Context, t mcpTool, args string) string {
	var a map[string]any
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return fmt.Sprintf("error: arguments are not a JSON object: %v", err)
	}
	out, err := h.conns[t.server].call(ctx, t.tool, a)
	if err != nil {
		return clip(fmt.Sprintf("error: MCP server %s, tool %s: %v", t.server, t.tool, err))
	}
	return clip(out)
}

func (h *mcpHub) close() {
	for _, c := range h.conns {
		c.close()
	}
}

// resultText renders a tool result for the model: its text, other content
// described, and structured content when there is no text.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]\n%s", c.Resource.URI, c.Resource.Text)
			}
		}
		b.WriteString("\n")
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if out == "" && res.StructuredContent != nil {
		j, _ := json.Marshal(res.StructuredContent)
		out = string(j)
	}
	if res.IsError {
		return "error: " + out
	}
	return out
}

// startMCP starts the servers whose tools the node lists (or replays them
// from the recording) and resolves the toolset. The returned context is
// the session's: with a server in the box it holds the box shared until
// stop, since the server may write at any time.
func (a *Agent) startMCP(ctx context.Context, in *runtime.Input, exec Executor, model Model) (*mcpHub, context.Context, func(), error) {
	used := a.usedServers()
	if len(used) == 0 {
		return nil, ctx, func() {}, nil
	}
	hub := &mcpHub{conns: map[string]mcpCaller{}}
	if rm, ok := model.(*replayModel); ok {
		for _, s := range used {
			if rm.mcp == nil || rm.mcp.lists[s.Name] == nil {
				return nil, ctx, nil, fmt.Errorf("replay: the recording has no tool list of MCP server %s", s.Name)
			}
			hub.conns[s.Name] = &replayConn{server: s.Name, tape: rm.mcp}
		}
		return hub, ctx, func() {}, hub.resolve(a.tools)
	}
	starter, _ := exec.(Starter)
	release := func() {}
	for _, s := range used {
		if s.URL == "" && starter != nil {
			var err error
			if ctx, release, err = starter.Hold(ctx); err != nil {
				return nil, ctx, nil, err
			}
			break
		}
	}
	stop := func() { hub.close(); release() }
	proxy, _ := ServiceProxy.Get(in)
	for _, s := range used {
		c, err := connect(ctx, s, starter, proxy)
		if err != nil {
			stop()
			return nil, ctx, nil, err
		}
		var caller mcpCaller = c
		if a.o.Record != "" {
			appendRecord(&a.o.models.recordMu, a.o.Record, recLine{MCPTools: &mcpToolsRec{Server: s.Name, Tools: c.list}})
			caller = &recordConn{mcpCaller: c, server: s.Name, mu: &a.o.models.recordMu, path: a.o.Record}
		}
		hub.conns[s.Name] = caller
	}
	if err := hub.resolve(a.tools); err != nil {
		stop()
		return nil, ctx, nil, err
	}
	return hub, ctx, stop, nil
}

// usedServers are the declared servers the toolset names.
func (a *Agent) usedServers() []MCPServer {
	var out []MCPServer
	for _, s := range a.servers {
		for _, t := range a.tools {
			if server, _, ok := splitMCPTool(t); ok && server == s.Name {
				out = append(out, s)
				break
			}
		}
	}
	return out
}
