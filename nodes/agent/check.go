package agent

import (
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// Config is the agent type's configuration; nodes.Specs declares the type
// from its tags (blueprint.Configured) and the factory decodes it.
type Config struct {
	Prompt         string        `sg:"prompt,required" doc:"system prompt; templates see inputs, outputs and feedback"`
	Model          string        `sg:"model" doc:"model name, or script:FILE / replay:FILE for offline runs"`
	BaseURL        string        `sg:"base_url,notemplate,endpoint" doc:"OpenAI-compatible endpoint; only one the operator allows (--allow-endpoint), else the operator's --base-url / OPENAI_BASE_URL"`
	APIKeyEnv      string        `sg:"api_key_env,notemplate,credential" doc:"environment variable holding the key, for an allowed base_url (default: the operator's --api-key-env / OPENAI_API_KEY)"`
	Tools          []string      `sg:"tools" doc:"subset of read_file, list_files, search, edit_file, write_file, run, finish, handoff, and MCP tools as server.tool or server.* (an MCP server's tools reach the model only when listed here)"`
	MCP            any           `sg:"mcp,notemplate" doc:"MCP tool servers: a list of {name, command: [argv], env: [NAME=value], timeout} (stdio, run inside the box) or {name, url, timeout} (streamable HTTP, reached only through the egress proxy, so sandbox.allow_hosts governs it); timeout bounds one call (default 1m)"`
	MaxTurns       int           `sg:"max_turns,default=20" doc:"model calls before the node fails"`
	MaxTokens      int           `sg:"max_tokens" doc:"tokens this node may spend"`
	Temperature    float64       `sg:"temperature" doc:"sampling temperature"`
	RequestTimeout time.Duration `sg:"request_timeout,default=2m" doc:"timeout of one model request"`
}

// Validate refuses tools the agent does not implement, malformed MCP
// servers, and MCP tools of servers the node does not declare. It runs
// when the blueprint loads, and again before the node is built, so
// validate and run cannot disagree. Whether a server really has a tool is
// checked at run start, before any model call.
func (c *Config) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	var ds []blueprint.Diagnostic
	servers, issues := parseMCP(c.MCP)
	for _, is := range issues {
		ds = append(ds, n.ErrorAt("mcp", is.index, "%s", is.msg))
	}
	for _, is := range checkTools(c.Tools, servers) {
		ds = append(ds, n.ErrorAt("tools", is.index, "%s", is.msg))
	}
	return ds
}

// toolHint suggests the closest tool name, or lists them all.
func toolHint(t string) string {
	names := ToolNames()
	if hint := blueprint.Suggest(t, names); hint != "" {
		return hint
	}
	return " (tools: " + strings.Join(names, ", ") + ")"
}
