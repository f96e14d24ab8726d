package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// shippedMarker introduces a README listing that is a shipped file, word
// for word, in the code block that follows.
var shippedMarker = regexp.MustCompile("<!-- shipped: (blueprints/[a-z0-9-]+\\.yaml) -->\n```yaml\n")

// TestReadmeShowsShippedBlueprints keeps every README listing marked as a
// shipped blueprint equal to the file (-update copies the files in).
func TestReadmeShowsShippedBlueprints(t *testing.T) {
	const path = "../../README.md"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rest, found := readme, 0
	for {
		m := shippedMarker.FindSubmatchIndex(rest)
		if m == nil {
			out.Write(rest)
			break
		}
		found++
		out.Write(rest[:m[1]])
		file := string(rest[m[2]:m[3]])
		end := bytes.Index(rest[m[1]:], []byte("```\n"))
		if end < 0 {
			t.Fatalf("README: the listing of %s has no end", file)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := rest[m[1] : m[1]+end]; !bytes.Equal(got, want) && !*update {
			t.Errorf("README's listing of %s is not the shipped file: go test ./cmd/sandgate -run TestReadmeShowsShippedBlueprints -update", file)
		}
		out.Write(want)
		rest = rest[m[1]+end:]
	}
	if found == 0 {
		t.Fatal("README shows no shipped blueprint")
	}
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadmeListsShippedBlueprints: every blueprint file the README names
// exists, and every shipped blueprint is linked from it.
func TestReadmeListsShippedBlueprints(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`blueprints/[A-Za-z0-9_-]+\.ya?ml`).FindAll(readme, -1) {
		if _, err := os.Stat(filepath.Join("..", "..", string(m))); err != nil {
			t.Errorf("README names %s: %v", m, err)
		}
	}
	files, _ := filepath.Glob("../../blueprints/*.yaml")
	for _, f := range files {
		link := "](blueprints/" + filepath.Base(f) + ")"
		if !bytes.Contains(readme, []byte(link)) {
			t.Errorf("README does not link the shipped %s (want %q)", filepath.Base(f), link)
		}
	}
}
