package blueprint

import (
	"fmt"
	"strings"
)

// edgeLabel is the text drawn on an edge: its outcome or condition, and its
// bound.
func edgeLabel(e *Edge) string {
	var parts []string
	switch e.Kind {
	case EdgeOnPass:
		parts = append(parts, "pass")
	case EdgeOnFail:
		parts = append(parts, "fail")
	case EdgeWhen:
		if e.When != nil {
			parts = append(parts, e.When.Source)
		} else {
			parts = append(parts, "otherwise")
		}
	}
	if e.Max > 0 {
		parts = append(parts, fmt.Sprintf("max %d", e.Max))
	}
	return strings.Join(parts, ", ")
}

// Mermaid renders the blueprint as a Mermaid flowchart.
func (bp *Blueprint) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		label := mermaidText(fmt.Sprintf("%s<br/><i>%s</i>", id, n.Type))
		switch {
		case IsTerminal(n.Type):
			fmt.Fprintf(&b, "  %s([\"%s\"]):::%s\n", id, label, n.Type)
		default:
			fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, label)
		}
	}
	for _, id := range bp.Order {
		for _, e := range bp.Nodes[id].Edges {
			arrow := "-->"
			if e.Max > 0 {
				arrow = "-.->"
			}
			if l := edgeLabel(e); l != "" {
				fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", id, arrow, mermaidText(l), e.To)
			} else {
				fmt.Fprintf(&b, "  %s %s %s\n", id, arrow, e.To)
			}
			if e.OnExhausted != "" {
				fmt.Fprintf(&b, "  %s -.->|\"exhausted\"| %s\n", id, e.OnExhausted)
			}
		}
	}
	b.WriteString("  classDef succeed fill:#d4f7d4,stroke:#2e7d32\n")
	b.WriteString("  classDef handoff fill:#ffe0b2,stroke:#ef6c00\n")
	b.WriteString("  classDef fail fill:#ffcdd2,stroke:#c62828\n")
	return b.String()
}

func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "|", "#124;").Replace(s)
}

// DOT renders the blueprint as a Graphviz digraph.
func (bp *Blueprint) DOT() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=TB;\n  node [shape=box, style=rounded];\n", bp.Name)
	colors := map[string]string{TypeSucceed: "#d4f7d4", TypeHandoff: "#ffe0b2", TypeFail: "#ffcdd2"}
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		attrs := fmt.Sprintf("label=%q", id+"\n"+n.Type)
		if c, ok := colors[n.Type]; ok {
			attrs += fmt.Sprintf(", shape=ellipse, style=filled, fillcolor=%q", c)
		}
		fmt.Fprintf(&b, "  %s [%s];\n", id, attrs)
	}
	for _, id := range bp.Order {
		for _, e := range bp.Nodes[id].Edges {
			attrs := []string{fmt.Sprintf("label=%q", edgeLabel(e))}
			if e.Max > 0 {
				attrs = append(attrs, "style=dashed")
			}
			if e.Kind == EdgeOnFail {
				attrs = append(attrs, "color=\"#c62828\"")
			}
			fmt.Fprintf(&b, "  %s -> %s [%s];\n", id, e.To, strings.Join(attrs, ", "))
			if e.OnExhausted != "" {
				fmt.Fprintf(&b, "  %s -> %s [label=\"exhausted\", style=dotted];\n", id, e.OnExhausted)
			}
		}
	}
	b.WriteString("}\n")
	return b.String()
}
