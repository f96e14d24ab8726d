package agent

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// MCPServer is one MCP tool server of an agent node (its mcp: list).
// A stdio server (command) runs in the run's box, so its files and network
// are the box's; an HTTP server (url) is reached only through the run's
// egress proxy, so sandbox.allow_hosts governs it. Its tools reach the
// model only when the node's tools list names them, as server.tool or
// server.*.
type MCPServer struct {
	Name string
	// Command is the argv of a stdio server, started in the box.
	Command []string
	// Env adds NAME=value entries to a stdio server's environment.
	Env []string
	// URL is a streamable HTTP endpoint.
	URL string
	// Timeout bounds one call (and the start: connect and list tools).
	Timeout time.Duration
}

// DefaultMCPTimeout bounds an MCP call whose server sets no timeout.
const DefaultMCPTimeout = time.Minute

var (
	serverName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	envEntry   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// parseMCP reads the mcp: value (a YAML list of mappings); each problem is
// reported with the index of its server.
func parseMCP(v any) ([]MCPServer, []mcpIssue) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, []mcpIssue{{-1, "mcp must be a list of servers ({name, command} or {name, url})"}}
	}
	var out []MCPServer
	var issues []mcpIssue
	seen := map[string]bool{}
	for i, item := range list {
		s, msg := parseServer(item)
		if msg == "" && seen[s.Name] {
			msg = fmt.Sprintf("server name %q is declared twice", s.Name)
		}
		if msg != "" {
			issues = append(issues, mcpIssue{i, msg})
			continue
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, issues
}

type mcpIssue struct {
	index int
	msg   string
}

// parseServer reads one server mapping.
func parseServer(item any) (MCPServer, string) {
	m, ok := normalizeYAML(item).(map[string]any)
	if !ok {
		return MCPServer{}, "a server is a mapping: {name, command: [argv]} or {name, url}"
	}
	var s MCPServer
	for k, v := range m {
		var msg string
		switch k {
		case "name":
			s.Name, msg = stringOf(k, v)
		case "url":
			s.URL, msg = stringOf(k, v)
		case "command":
			s.Command, msg = stringsOf(k, v)
		case "env":
			s.Env, msg = stringsOf(k, v)
		case "timeout":
			var t string
			if t, msg = stringOf(k, v); msg == "" {
				var err error
				if s.Timeout, err = time.ParseDuration(t); err != nil || s.Timeout <= 0 {
					msg = fmt.Sprintf("timeout %q is not a positive duration (30s, 2m)", t)
				}
			}
		default:
			msg = fmt.Sprintf("unknown key %q%s", k, blueprint.Suggest(k, []string{"name", "command", "env", "url", "timeout"}))
		}
		if msg != "" {
			return s, msg
		}
	}
	return s, s.check()
}

// check refuses a server the harness could not start as declared.
func (s *MCPServer) check() string {
	switch {
	case !serverName.MatchString(s.Name):
		return fmt.Sprintf("name %q must be lower-case letters, digits, _ or - (at most 32, starting with a letter): it prefixes the tool names the model sees", s.Name)
	case (len(s.Command) > 0) == (s.URL != ""):
		return fmt.Sprintf("server %s needs exactly one of command (a stdio server run in the box) or url (streamable HTTP through the egress proxy)", s.Name)
	case s.URL != "" && len(s.Env) > 0:
		return fmt.Sprintf("server %s: env is for stdio servers; an HTTP server's environment is not the harness's to set", s.Name)
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Sprintf("server %s: url %q must be an absolute http:// or https:// URL", s.Name, s.URL)
		}
		if u.User != nil {
			return fmt.Sprintf("server %s: url must not carry credentials", s.Name)
		}
	}
	for _, e := range s.Env {
		if !envEntry.MatchString(e) {
			return fmt.Sprintf("server %s: env entry %q is not NAME=value", s.Name, e)
		}
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultMCPTimeout
	}
	return ""
}

func stringOf(k string, v any) (string, string) {
	s, ok := v.(string)
	if !ok || s == "" {
		return "", k + " must be a non-empty string"
	}
	return s, ""
}

func stringsOf(k string, v any) ([]string, string) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, k + " must be a non-empty list of strings"
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Sprintf("%s[%d] must be a string", k, i)
		}
		out[i] = s
	}
	return out, ""
}

// splitMCPTool splits a tools entry server.tool (or server.*); ok is false
// for a built-in tool's name.
func splitMCPTool(entry string) (server, tool string, ok bool) {
	return strings.Cut(entry, ".")
}

// checkTools checks a toolset against the built-ins and the declared
// servers: syntax and servers here; the servers' own tool lists only at
// run start, when they are running.
func checkTools(tools []string, servers []MCPServer) []mcpIssue {
	declared := make([]string, len(servers))
	for i, s := range servers {
		declared[i] = s.Name
	}
	var issues []mcpIssue
	for i, t := range tools {
		server, tool, isMCP := splitMCPTool(t)
		switch {
		case !isMCP:
			if _, ok := lookupTool(t); !ok {
				issues = append(issues, mcpIssue{i, fmt.Sprintf("unknown tool %q%s", t, toolHint(t))})
			}
		case !contains(declared, server):
			issues = append(issues, mcpIssue{i, fmt.Sprintf("tool %q names MCP server %q, which the node's mcp list does not declare%s", t, server, blueprint.Suggest(server, declared))})
		case tool == "" || strings.Contains(tool, ".") || strings.Contains(tool, "*") && tool != "*":
			issues = append(issues, mcpIssue{i, fmt.Sprintf("tool %q: write server.tool or server.* (the only wildcard)", t)})
		}
	}
	return issues
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
