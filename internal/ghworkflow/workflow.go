package ghworkflow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a problem in a workflow, at a position.
type Error struct {
	File         string
	Line, Column int
	Field        string
	Problem      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Field, e.Problem)
}

// Workflow is what a workflow says about its toolchain, job by job in
// the file's order.
type Workflow struct {
	File string `json:"file"`
	Jobs []Job  `json:"jobs"`
}

// Job is one job's toolchain.
type Job struct {
	ID string `json:"job"`
	// Container is the job's container image as written, "" for none.
	Container string `json:"container,omitempty"`
	// ContainerAt is its position, file:line:col.
	ContainerAt string `json:"container_at,omitempty"`
	Tools       []Tool `json:"tools,omitempty"`
}

// Tool is one version a setup action installs.
type Tool struct {
	// Name is go, node or python.
	Name string `json:"tool"`
	// Version is the version resolved from the workflow, or "" when it
	// cannot be read (Note says why).
	Version string `json:"version,omitempty"`
	// Written is the value as the workflow writes it.
	Written string `json:"written"`
	At      string `json:"at"`
	Note    string `json:"note,omitempty"`
}

// setups maps a setup action to its tool and its version inputs.
var setups = map[string]struct{ tool, input, file string }{
	"actions/setup-go":     {"go", "go-version", "go-version-file"},
	"actions/setup-node":   {"node", "node-version", "node-version-file"},
	"actions/setup-python": {"python", "python-version", "python-version-file"},
}

// ReadFile reads a file of the repository (go.mod for go-version-file);
// nil, or an error, leaves such a version unresolved.
type ReadFile func(name string) ([]byte, error)

// maxSize bounds a workflow: a real one is a few KiB.
const maxSize = 1 << 20

// Parse reads the workflow file (its name for positions) from data.
func Parse(file string, data []byte, read ReadFile) (*Workflow, error) {
	if len(data) > maxSize {
		return nil, &Error{file, 1, 1, "workflow", fmt.Sprintf("%d bytes (at most %d)", len(data), maxSize)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, err)
	}
	w := &Workflow{File: file, Jobs: []Job{}}
	if len(doc.Content) == 0 {
		return w, nil
	}
	p := &parser{file: file, read: read}
	root, err := p.mapping(doc.Content[0], "workflow")
	if err != nil {
		return nil, err
	}
	env, err := p.env(root["env"], "env")
	if err != nil {
		return nil, err
	}
	jobs := root["jobs"]
	if jobs == nil {
		return w, nil
	}
	if jobs.Kind != yaml.MappingNode {
		return nil, p.errf(jobs, "jobs", "is %s, want a mapping of job ids", kind(jobs))
	}
	for i := 0; i+1 < len(jobs.Content); i += 2 {
		j, err := p.job(jobs.Content[i].Value, jobs.Content[i+1], env)
		if err != nil {
			return nil, err
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, nil
}

// yamlLine finds yaml.v3's "line N" in a syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(file string, err error) error {
	line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &line)
		msg = m[2]
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	return &Error{file, line, 1, "workflow", "not YAML: " + msg}
}

type parser struct {
	file string
	read ReadFile
}

func (p *parser) errf(n *yaml.Node, field, format string, args ...any) error {
	return &Error{p.file, n.Line, n.Column, field, fmt.Sprintf(format, args...)}
}

func (p *parser) at(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", p.file, n.Line, n.Column) }

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "empty"
}

// mapping returns n's keys (the last of a repeated key wins, as GitHub
// takes it); n must be a mapping. Aliases are refused: GitHub does not
// take them, and they are how a small document grows without bound.
func (p *parser) mapping(n *yaml.Node, field string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, field, "is %s, want a mapping", kind(n))
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.AliasNode || k.Kind == yaml.AliasNode {
			return nil, p.errf(v, field+"."+k.Value, "YAML aliases are not taken")
		}
		m[k.Value] = v
	}
	return m, nil
}

// scalar returns n's text; n must be a scalar.
func (p *parser) scalar(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, field, "is %s, want a string", kind(n))
	}
	return n.Value, nil
}

// env reads an env: mapping of literal values (nil: none).
func (p *parser) env(n *yaml.Node, field string) (map[string]string, error) {
	out := map[string]string{}
	if n == nil {
		return out, nil
	}
	if n.Kind == yaml.ScalarNode {
		return out, nil // an expression (${{ fromJSON(...) }}): nothing literal
	}
	m, err := p.mapping(n, field)
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		if v.Kind == yaml.ScalarNode {
			out[k] = v.Value
		}
	}
	return out, nil
}
