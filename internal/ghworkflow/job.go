package ghworkflow

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// job reads one job: its container and its setup steps.
func (p *parser) job(id string, n *yaml.Node, wfEnv map[string]string) (Job, error) {
	field := "jobs." + id
	j := Job{ID: id}
	m, err := p.mapping(n, field)
	if err != nil {
		return j, err
	}
	env, err := p.env(m["env"], field+".env")
	if err != nil {
		return j, err
	}
	for k, v := range wfEnv {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	matrix, err := p.matrix(m["strategy"], field+".strategy")
	if err != nil {
		return j, err
	}
	if c := m["container"]; c != nil {
		if c.Kind == yaml.MappingNode {
			cm, err := p.mapping(c, field+".container")
			if err != nil {
				return j, err
			}
			if c = cm["image"]; c == nil {
				return j, p.errf(n, field+".container", "has no image")
			}
		}
		if j.Container, err = p.scalar(c, field+".container"); err != nil {
			return j, err
		}
		j.ContainerAt = p.at(c)
	}
	steps := m["steps"]
	if steps == nil {
		return j, nil
	}
	if steps.Kind != yaml.SequenceNode {
		return j, p.errf(steps, field+".steps", "is %s, want a sequence", kind(steps))
	}
	for i, s := range steps.Content {
		t, ok, err := p.step(s, fmt.Sprintf("%s.steps[%d]", field, i), env, matrix)
		if err != nil {
			return j, err
		}
		if ok {
			j.Tools = append(j.Tools, t)
		}
	}
	return j, nil
}

// matrix reads strategy.matrix: each key's list of scalar values, with
// the values include: entries add. An expression for the whole matrix
// (fromJSON of an earlier job's output) leaves it empty.
func (p *parser) matrix(n *yaml.Node, field string) (map[string][]string, error) {
	out := map[string][]string{}
	if n == nil || n.Kind == yaml.ScalarNode {
		return out, nil
	}
	s, err := p.mapping(n, field)
	if err != nil || s["matrix"] == nil || s["matrix"].Kind == yaml.ScalarNode {
		return out, err
	}
	m, err := p.mapping(s["matrix"], field+".matrix")
	if err != nil {
		return nil, err
	}
	add := func(k string, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode && !contains(out[k], v.Value) {
			out[k] = append(out[k], v.Value)
		}
	}
	for k, v := range m {
		switch {
		case k == "include" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				if e.Kind == yaml.MappingNode {
					for i := 0; i+1 < len(e.Content); i += 2 {
						add(e.Content[i].Value, e.Content[i+1])
					}
				}
			}
		case k != "exclude" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				add(k, e)
			}
		}
	}
	return out, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// step reads a step; ok when it is a setup action this package knows.
func (p *parser) step(n *yaml.Node, field string, env map[string]string, matrix map[string][]string) (Tool, bool, error) {
	m, err := p.mapping(n, field)
	if err != nil || m["uses"] == nil {
		return Tool{}, false, err
	}
	uses, err := p.scalar(m["uses"], field+".uses")
	if err != nil {
		return Tool{}, false, err
	}
	action, _, _ := strings.Cut(uses, "@")
	s, ok := setups[strings.ToLower(action)]
	if !ok {
		return Tool{}, false, nil
	}
	t := Tool{Name: s.tool, At: p.at(m["uses"])}
	var with map[string]*yaml.Node
	if w := m["with"]; w != nil {
		if with, err = p.mapping(w, field+".with"); err != nil {
			return t, false, err
		}
	}
	switch {
	case with[s.input] != nil:
		v := with[s.input]
		if t.Written, err = p.scalar(v, field+".with."+s.input); err != nil {
			return t, false, err
		}
		t.At = p.at(v)
		t.Version, t.Note = resolve(s.tool, t.Written, env, matrix)
	case with[s.file] != nil:
		v := with[s.file]
		if t.Written, err = p.scalar(v, field+".with."+s.file); err != nil {
			return t, false, err
		}
		t.At = p.at(v)
		t.Version, t.Note = p.fromFile(s.tool, t.Written)
	default:
		t.Note = "no " + s.input + ": the action installs whatever version the runner has"
	}
	return t, true, nil
}

// resolve turns a written version into one version: a literal, an env
// value, or the newest of a matrix's values. The newest, because an
// image holds one toolchain and the newest leg is where vet and the
// compilers are strictest; CI still runs the other legs.
func resolve(tool, written string, env map[string]string, matrix map[string][]string) (string, string) {
	expr, ok := expression(written)
	if !ok {
		return version(tool, written)
	}
	switch {
	case strings.HasPrefix(expr, "matrix."):
		vals := matrix[strings.TrimPrefix(expr, "matrix.")]
		var good []string
		for _, v := range vals {
			if ver, _ := version(tool, v); ver != "" {
				good = append(good, ver)
			}
		}
		if len(good) == 0 {
			return "", fmt.Sprintf("%s names no literal version in the matrix", expr)
		}
		sort.Slice(good, func(i, j int) bool { return versionLess(good[j], good[i]) })
		if len(good) == 1 {
			return good[0], ""
		}
		return good[0], fmt.Sprintf("the matrix has %s: chose %s, the newest (an image holds one toolchain; the newest is where vet and the compilers are strictest; CI still runs the other legs)", strings.Join(good, ", "), good[0])
	case strings.HasPrefix(expr, "env."):
		if v, ok := env[strings.TrimPrefix(expr, "env.")]; ok {
			if _, nested := expression(v); !nested {
				return version(tool, v)
			}
		}
		return "", expr + " has no literal value in the workflow's env"
	}
	return "", "an expression this helper does not evaluate: write the version literally, or name it yourself"
}

// expression returns the inside of a value that is exactly one ${{ }}.
func expression(s string) (string, bool) {
	s = strings.TrimSpace(s)
	in, ok := strings.CutPrefix(s, "${{")
	if !ok {
		return "", false
	}
	in, ok = strings.CutSuffix(in, "}}")
	return strings.TrimSpace(in), ok && !strings.Contains(in, "}}")
}
