package agent

import (
	"context"
	"fmt"
	"strings"
)

// rule is one file of agent rules found in the workspace.
type rule struct {
	Path        string
	Description string
	Globs       string
	Always      bool
	Body        string
}

// loadRules reads AGENTS.md, CLAUDE.md and Cursor rules from the
// workspace, so attended and unattended agents follow the same
// conventions.
func (tb *toolbox) loadRules(ctx context.Context) ([]rule, error) {
	res, err := tb.sh(ctx, `cd /work && for f in AGENTS.md CLAUDE.md .cursor/rules/*.mdc; do [ -f "$f" ] && [ ! -L "$f" ] && printf '\036%s\037' "$f" && head -c 65536 -- "$f"; done; true`, nil)
	if err != nil {
		return nil, err
	}
	var out []rule
	for _, chunk := range strings.Split(string(res.Output), "\x1e")[1:] {
		path, body, ok := strings.Cut(chunk, "\x1f")
		if !ok {
			continue
		}
		r := rule{Path: path, Body: body, Always: !strings.HasSuffix(path, ".mdc")}
		if strings.HasSuffix(path, ".mdc") {
			r = parseMDC(path, body)
		}
		out = append(out, r)
	}
	return out, nil
}

// parseMDC reads a Cursor rule: front matter with description, globs and
// alwaysApply, then the rule text.
func parseMDC(path, s string) rule {
	r := rule{Path: path, Body: s}
	if !strings.HasPrefix(s, "---") {
		return r
	}
	rest := strings.TrimPrefix(s, "---")
	front, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return r
	}
	r.Body = strings.TrimLeft(body, "-\n")
	for _, line := range strings.Split(front, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "description":
			r.Description = v
		case "globs":
			r.Globs = v
		case "alwaysApply":
			r.Always = v == "true"
		}
	}
	return r
}

// rulesPrompt renders the rules for the system prompt: rules that always
// apply in full, scoped ones with their globs, others by description.
func rulesPrompt(rules []rule) string {
	if len(rules) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Repository rules\nFollow these conventions from the repository.\n")
	for _, r := range rules {
		switch {
		case r.Always:
			fmt.Fprintf(&b, "\n## %s\n%s\n", r.Path, strings.TrimSpace(r.Body))
		case r.Globs != "":
			fmt.Fprintf(&b, "\n## %s (applies to files matching %s)\n%s\n", r.Path, r.Globs, strings.TrimSpace(r.Body))
		default:
			fmt.Fprintf(&b, "\n## %s\n%s — read this file with read_file when it is relevant.\n", r.Path, r.Description)
		}
	}
	return b.String()
}
