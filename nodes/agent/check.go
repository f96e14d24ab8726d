package agent

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sandgate/sandgate/blueprint"
)

// Check is the agent type's validation hook: every configured tool must be
// one the agent implements. It runs when the blueprint loads, and again
// before the node is built, so validate and run cannot disagree.
func Check(n *blueprint.Node, _ *yaml.Node) []blueprint.Diagnostic {
	tools, _ := n.Config["tools"].([]string)
	var ds []blueprint.Diagnostic
	for i, t := range tools {
		if _, ok := lookupTool(t); !ok {
			ds = append(ds, n.ErrorAt("tools", i, "unknown tool %q%s", t, toolHint(t)))
		}
	}
	return ds
}

// unknownTools refuses a toolset naming a tool the agent lacks.
func unknownTools(names []string) error {
	for _, t := range names {
		if _, ok := lookupTool(t); !ok {
			return fmt.Errorf("agent tools: unknown tool %q%s", t, toolHint(t))
		}
	}
	return nil
}

// toolHint suggests the closest tool name, or lists them all.
func toolHint(t string) string {
	names := ToolNames()
	if hint := blueprint.Suggest(t, names); hint != "" {
		return hint
	}
	return " (tools: " + strings.Join(names, ", ") + ")"
}
