package agent

import (
	"sort"
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
		if _, ok := toolSpecs[t]; ok {
			continue
		}
		hint := blueprint.Suggest(t, toolNames())
		if hint == "" {
			hint = " (tools: " + strings.Join(DefaultTools, ", ") + ")"
		}
		ds = append(ds, n.ErrorAt("tools", i, "unknown tool %q%s", t, hint))
	}
	return ds
}

func toolNames() []string {
	out := make([]string, 0, len(toolSpecs))
	for n := range toolSpecs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
