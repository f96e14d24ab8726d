package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
)

// TestNodeTypesDoc keeps docs/node-types.md equal to what the Go
// declarations say (run with -update to regenerate).
func TestNodeTypesDoc(t *testing.T) {
	const path = "../../docs/node-types.md"
	want := nodeTypesDoc()
	if *update {
		os.MkdirAll("../../docs", 0o755)
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: go test ./cmd/sandgate -run TestNodeTypesDoc -update (%v)", path, err)
	}
}

func nodeTypesDoc() []byte {
	var b strings.Builder
	b.WriteString("# Node types\n\nGenerated from the Go declarations (`nodes.Specs`) by `go test ./cmd/sandgate -run TestNodeTypesDoc -update`.\n")
	b.WriteString("Every node also accepts `type`, `description`, `timeout`, `retry`, `needs`, `next`, `on_pass`, `on_fail` and `edges` ")
	b.WriteString("(see the README), and every node publishes `outputs.<id>.outcome` (`pass`, `fail` or `handoff`).\n")
	specs := append(nodes.Specs(), blueprint.BuiltinTypes()...)
	for _, s := range specs {
		fmt.Fprintf(&b, "\n## `%s`\n\n%s.\n", s.Name, s.Doc)
		if len(s.Fields) > 0 {
			b.WriteString("\n| key | kind | required | meaning |\n|---|---|---|---|\n")
			names := make([]string, 0, len(s.Fields))
			for n := range s.Fields {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				f := s.Fields[n]
				kind := string(f.Kind)
				if len(f.Enum) > 0 {
					kind = strings.Join(f.Enum, " \\| ")
				}
				req := ""
				if f.Required {
					req = "yes"
				}
				doc := f.Doc
				if f.Default != "" {
					doc += fmt.Sprintf(" (default %s)", f.Default)
				}
				if f.NoTemplate {
					doc += " (no `${{ }}` templates)"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", n, kind, req, doc)
			}
		}
		if len(s.Outputs) > 0 {
			names := make([]string, 0, len(s.Outputs))
			for n := range s.Outputs {
				names = append(names, fmt.Sprintf("`%s` (%s)", n, s.Outputs[n]))
			}
			sort.Strings(names)
			fmt.Fprintf(&b, "\nOutputs: %s.\n", strings.Join(names, ", "))
		}
	}
	return []byte(b.String())
}
