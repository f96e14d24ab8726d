// Package eval measures a blueprint on a set of tasks: it runs the
// blueprint once per task, grades every change a run promoted against
// held-out tests in a fresh box the run never saw, and reports how many
// tasks were resolved, handed off or falsely promoted, and at what cost.
//
// The engine knows nothing of the CLI: the caller supplies the function
// that performs one run (RunFunc), so `sandgate eval` reuses the exact
// path `sandgate run` takes.
package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Task is one problem of a task set. Paths are absolute once loaded.
type Task struct {
	ID string `json:"id"`
	// Repo is a local git repository; Seed, instead, is a plain directory
	// of files committed into a fresh repository under the output
	// directory (nested .git directories cannot be committed, so shipped
	// task sets carry their repositories as plain files).
	Repo   string         `json:"repo,omitempty"`
	Seed   string         `json:"seed,omitempty"`
	Commit string         `json:"commit,omitempty"`
	Inputs map[string]any `json:"inputs,omitempty"`
	Model  string         `json:"model,omitempty"`
	// Hidden holds the held-out test files placed over the change only
	// for grading; at their paths they win over whatever the change did.
	Hidden string `json:"hidden"`
	// GateHidden, when set, is a second set of held-out tests the
	// blueprint's test gates run during the run (the agent learns only how
	// many failed). Its files must not have the path of a repository file.
	GateHidden string   `json:"gate_hidden,omitempty"`
	FailToPass []string `json:"fail_to_pass"`
	PassToPass []string `json:"pass_to_pass,omitempty"`
}

// TaskSet is a loaded task file.
type TaskSet struct {
	File  string
	Tasks []*Task
}

// Problems are every problem found in a task file, one per line as
// file:line:col: field: problem.
type Problems []string

func (p Problems) Error() string { return strings.Join(p, "\n") }

var (
	idPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	testPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(/[^\s]+)?$`)
)

// LoadTasks reads and checks a task file. Relative paths are taken from
// the file's directory; a model "script:REL" or "replay:REL" too.
func LoadTasks(path string) (*TaskSet, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTasks(path, src)
}

// ParseTasks checks a task file's content; name is used in problems and
// to resolve relative paths.
func ParseTasks(name string, src []byte) (*TaskSet, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &loader{file: name, dir: filepath.Dir(name)}
	if abs, err := filepath.Abs(l.dir); err == nil {
		l.dir = abs
	}
	set := &TaskSet{File: name}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		l.add(root, "", "want a mapping with a tasks list")
		return nil, l.problems
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "tasks" {
			l.add(k, k.Value, "unknown field (a task file has: tasks)")
			continue
		}
		list = v
	}
	switch {
	case list == nil:
		l.add(root, "tasks", "missing")
	case list.Kind != yaml.SequenceNode:
		l.add(list, "tasks", "want a list of tasks")
	case len(list.Content) == 0:
		l.add(list, "tasks", "empty: nothing to measure")
	default:
		seen := map[string]*yaml.Node{}
		for i, n := range list.Content {
			t := l.task(n, fmt.Sprintf("tasks[%d]", i))
			if t == nil || t.ID == "" {
				continue
			}
			if prev, dup := seen[t.ID]; dup {
				l.add(n, fmt.Sprintf("tasks[%d].id", i), fmt.Sprintf("%q repeats the id of the task at line %d", t.ID, prev.Line))
				continue
			}
			seen[t.ID] = n
			set.Tasks = append(set.Tasks, t)
		}
	}
	if len(l.problems) > 0 {
		return nil, l.problems
	}
	return set, nil
}

type loader struct {
	file, dir string
	problems  Problems
}

func (l *loader) add(n *yaml.Node, field, msg string) {
	if field != "" {
		msg = field + ": " + msg
	}
	l.problems = append(l.problems, fmt.Sprintf("%s:%d:%d: %s", l.file, n.Line, n.Column, msg))
}

// task decodes one task, collecting every problem it has.
func (l *loader) task(n *yaml.Node, at string) *Task {
	if n.Kind != yaml.MappingNode {
		l.add(n, at, "want a mapping")
		return nil
	}
	t := &Task{}
	got := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := at + "." + k.Value
		got[k.Value] = v
		switch k.Value {
		case "id", "repo", "seed", "commit", "model", "hidden", "gate_hidden":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				l.add(v, f, "want a string")
				continue
			}
			l.setString(t, k.Value, v, f)
		case "inputs":
			if v.Kind != yaml.MappingNode {
				l.add(v, f, "want a mapping of input names to values")
				continue
			}
			if err := v.Decode(&t.Inputs); err != nil {
				l.add(v, f, err.Error())
			}
		case "fail_to_pass", "pass_to_pass":
			names := l.testNames(v, f)
			if k.Value == "fail_to_pass" {
				t.FailToPass = names
			} else {
				t.PassToPass = names
			}
		default:
			l.add(k, f, "unknown field (a task has: id, repo, seed, commit, inputs, model, hidden, gate_hidden, fail_to_pass, pass_to_pass)")
		}
	}
	l.required(n, at, got, t)
	return t
}

func (l *loader) setString(t *Task, key string, v *yaml.Node, f string) {
	val := v.Value
	switch key {
	case "id":
		if !idPattern.MatchString(val) {
			l.add(v, f, fmt.Sprintf("%q: want letters, digits, '.', '_' or '-' (it names the task's run directory)", val))
		}
		t.ID = val
	case "commit":
		if strings.HasPrefix(val, "-") {
			l.add(v, f, fmt.Sprintf("%q: a revision cannot start with '-'", val))
		}
		t.Commit = val
	case "model":
		t.Model = l.model(val)
	default:
		p := l.path(val)
		if _, err := os.Stat(p); err != nil {
			l.add(v, f, fmt.Sprintf("%s: %v", val, errors.Unwrap(err)))
		}
		switch key {
		case "repo":
			t.Repo = p
		case "seed":
			t.Seed = p
		case "hidden":
			t.Hidden = p
		case "gate_hidden":
			t.GateHidden = p
		}
	}
}

func (l *loader) required(n *yaml.Node, at string, got map[string]*yaml.Node, t *Task) {
	for _, key := range []string{"id", "hidden", "fail_to_pass"} {
		if got[key] == nil {
			l.add(n, at+"."+key, "missing")
		}
	}
	if got["repo"] != nil && got["seed"] != nil {
		l.add(got["seed"], at+".seed", "give repo or seed, not both")
	}
	if got["repo"] == nil && got["seed"] == nil {
		l.add(n, at+".repo", "missing (or seed: a directory of files to commit into a fresh repository)")
	}
	if got["fail_to_pass"] != nil && len(t.FailToPass) == 0 {
		l.add(got["fail_to_pass"], at+".fail_to_pass", "empty: a task needs a test its fix makes pass")
	}
	if t.Commit == "" {
		t.Commit = "HEAD"
	}
	for key, dir := range map[string]string{"hidden": t.Hidden, "gate_hidden": t.GateHidden} {
		for _, tree := range []string{t.Repo, t.Seed} {
			if dir != "" && tree != "" && within(dir, tree) {
				l.add(got[key], at+"."+key, fmt.Sprintf("%s is inside the task's repository %s: the agent would read the held-out tests", dir, tree))
			}
		}
	}
}

// within says whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func (l *loader) testNames(v *yaml.Node, f string) []string {
	if v.Kind != yaml.SequenceNode {
		l.add(v, f, "want a list of test names")
		return nil
	}
	var names []string
	for i, e := range v.Content {
		if e.Kind != yaml.ScalarNode || !testPattern.MatchString(e.Value) {
			l.add(e, fmt.Sprintf("%s[%d]", f, i), fmt.Sprintf("%q is not a Go test name (TestX or TestX/sub)", e.Value))
			continue
		}
		names = append(names, e.Value)
	}
	return names
}

// path resolves a path relative to the task file.
func (l *loader) path(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(l.dir, p)
}

// model resolves script:/replay: files relative to the task file.
func (l *loader) model(m string) string {
	for _, pre := range []string{"script:", "replay:"} {
		if rest, ok := strings.CutPrefix(m, pre); ok {
			return pre + l.path(rest)
		}
	}
	return m
}
