package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Executor runs commands in the run's sandbox; *sandbox.Box implements it.
type Executor interface {
	Exec(ctx context.Context, c sandbox.Command) (*sandbox.Result, error)
}

// ServiceExecutor is the Input.Services key under which the environment
// provides the sandbox.
var ServiceExecutor = runtime.NewServiceKey[Executor]("sandgate.exec")

// maxToolOutput caps what one tool call sends back to the model.
const maxToolOutput = 16 << 10

// tool is one tool's declaration: the contract blueprints and transcripts
// rely on (name, arguments) and what carries it out. Validation, the
// schema's documentation and the tool list offered to the model all derive
// from builtinTools.
type tool struct {
	name, desc string
	params     string // JSON Schema of the arguments object
	// run carries the call out; nil for finish and handoff, which the
	// session handles because they end it.
	run func(tb *toolbox, ctx context.Context, a map[string]any) (string, error)
}

// builtinTools is every tool, in the order the default toolset offers them:
// read, search, edit exactly, write, run, and the two ways to stop.
var builtinTools = []tool{
	{"read_file", "Read a text file of the repository. offset (1-based line) and limit (lines) page through long files.", `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"]}`, (*toolbox).readFile},
	{"list_files", "List files and directories under a path of the repository.", `{"type":"object","properties":{"path":{"type":"string"},"depth":{"type":"integer","minimum":1,"maximum":6}}}`, (*toolbox).listFiles},
	{"search", "Search the repository for a regular expression (grep -E); returns file:line: text.", `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`, (*toolbox).search},
	{"edit_file", "Replace the exact text old with new in a file. old must occur exactly once; include surrounding lines to make it unique. Prefer this to rewriting files.", `{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}},"required":["path","old","new"]}`, (*toolbox).editFile},
	{"write_file", "Create or overwrite a file with content.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`, (*toolbox).writeFile},
	{"run", "Run a shell command in the repository (sandboxed, no network unless allowed). Returns the exit code and output.", `{"type":"object","properties":{"command":{"type":"string"},"timeout_s":{"type":"integer","minimum":1,"maximum":1800}},"required":["command"]}`, (*toolbox).run},
	{"finish", "Stop: the task is done. Summarize what you changed and why.", `{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`, nil},
	{"handoff", "Stop and ask a person to take over, saying why (missing access, unclear task, risky change).", `{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`, nil},
}

// stopTools end the session; every toolset has them.
var stopTools = []string{"finish", "handoff"}

// ToolNames lists every tool the agent implements, in declaration order.
// The caller owns the slice.
func ToolNames() []string {
	out := make([]string, len(builtinTools))
	for i, t := range builtinTools {
		out[i] = t.name
	}
	return out
}

// DefaultTools is the toolset when neither the blueprint nor the Options
// name one: every tool. The caller owns the slice.
func DefaultTools() []string { return ToolNames() }

// lookupTool finds a tool's declaration by name.
func lookupTool(name string) (*tool, bool) {
	for i := range builtinTools {
		if builtinTools[i].name == name {
			return &builtinTools[i], true
		}
	}
	return nil, false
}

// toolSpecsFor is what the model is offered for a toolset.
func toolSpecsFor(names []string) []ToolSpec {
	out := make([]ToolSpec, 0, len(names))
	for _, n := range names {
		if t, ok := lookupTool(n); ok {
			out = append(out, ToolSpec{Name: t.name, Description: t.desc, Parameters: json.RawMessage(t.params)})
		}
	}
	return out
}

// toolbox carries out tool calls in the sandbox.
type toolbox struct {
	exec    Executor
	allowed map[string]bool
	timeout time.Duration
}

// call runs one tool call and returns the text for the model; a bad call
// is reported in that text, never as a Go error, so the model can retry.
func (tb *toolbox) call(ctx context.Context, name, args string) (string, error) {
	if !tb.allowed[name] {
		known := make([]string, 0, len(tb.allowed))
		for n := range tb.allowed {
			known = append(known, n)
		}
		sort.Strings(known)
		return fmt.Sprintf("error: unknown tool %q; available tools: %s", name, strings.Join(known, ", ")), nil
	}
	var a map[string]any
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return fmt.Sprintf("error: arguments are not a JSON object: %v", err), nil
	}
	if t, ok := lookupTool(name); ok && t.run != nil {
		return t.run(tb, ctx, a)
	}
	return "error: " + name + " cannot be called here", nil
}

func str(a map[string]any, k string, required bool) (string, error) {
	v, ok := a[k]
	if !ok {
		if required {
			return "", fmt.Errorf("missing argument %q", k)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string", k)
	}
	return s, nil
}

func num(a map[string]any, k string, def int) (int, error) {
	v, ok := a[k]
	if !ok {
		return def, nil
	}
	switch n := v.(type) {
	case float64:
		return int(n), nil
	case string:
		return strconv.Atoi(n)
	}
	return 0, fmt.Errorf("argument %q must be a number", k)
}

// guard is prepended to every file script: the resolved path must stay in
// the workspace, so a symlink planted there cannot lead elsewhere.
const guard = `case "$(readlink -m -- "$1")" in /work|/work/*) ;; *) echo "error: path resolves outside the workspace" >&2; exit 90;; esac; `

func (tb *toolbox) sh(ctx context.Context, script string, stdin []byte, args ...string) (*sandbox.Result, error) {
	argv := append([]string{"sh", "-c", script, "sh"}, args...)
	return tb.exec.Exec(ctx, sandbox.Command{Args: argv, Stdin: stdin, Timeout: time.Minute})
}

func toolErr(err error) (string, error) { return "error: " + err.Error(), nil }

func clip(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return s[:maxToolOutput] + fmt.Sprintf("\n[output truncated: %d more bytes; narrow the request]", len(s)-maxToolOutput)
}

func (tb *toolbox) readFile(ctx context.Context, a map[string]any) (string, error) {
	p, err := str(a, "path", true)
	if err != nil {
		return toolErr(err)
	}
	full, err := confine(p)
	if err != nil {
		return toolErr(err)
	}
	offset, err := num(a, "offset", 1)
	if err != nil {
		return toolErr(err)
	}
	limit, err := num(a, "limit", 2000)
	if err != nil {
		return toolErr(err)
	}
	res, err := tb.sh(ctx, guard+`test -f "$1" || { echo "error: no such file: $2" >&2; exit 1; }; sed -n "$3,$4p" -- "$1"`, nil,
		full, p, strconv.Itoa(max(offset, 1)), strconv.Itoa(max(offset, 1)+max(limit, 1)-1))
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return strings.TrimSpace(string(res.Output)), nil
	}
	return clip(string(res.Output)), nil
}

func (tb *toolbox) listFiles(ctx context.Context, a map[string]any) (string, error) {
	p, _ := str(a, "path", false)
	full, err := confine(p)
	if err != nil {
		return toolErr(err)
	}
	depth, err := num(a, "depth", 2)
	if err != nil {
		return toolErr(err)
	}
	res, err := tb.sh(ctx, guard+`cd -- "$1" && find . -mindepth 1 -maxdepth "$2" -name .git -prune -o -printf '%y %P\n' | sort | head -500`, nil, full, strconv.Itoa(min(max(depth, 1), 6)))
	if err != nil {
		return "", err
	}
	return clip(string(res.Output)), nil
}

func (tb *toolbox) search(ctx context.Context, a map[string]any) (string, error) {
	pat, err := str(a, "pattern", true)
	if err != nil {
		return toolErr(err)
	}
	p, _ := str(a, "path", false)
	full, err := confine(p)
	if err != nil {
		return toolErr(err)
	}
	res, err := tb.sh(ctx, guard+`cd /work && grep -rEn --exclude-dir=.git -e "$2" -- "${1#/work/}" 2>&1 | head -200`, nil, full, pat)
	if err != nil {
		return "", err
	}
	if len(res.Output) == 0 {
		return "no matches", nil
	}
	return clip(string(res.Output)), nil
}

func (tb *toolbox) editFile(ctx context.Context, a map[string]any) (string, error) {
	p, err := str(a, "path", true)
	if err != nil {
		return toolErr(err)
	}
	oldS, err := str(a, "old", true)
	if err != nil {
		return toolErr(err)
	}
	newS, err := str(a, "new", true)
	if err != nil {
		return toolErr(err)
	}
	full, err := confine(p)
	if err != nil {
		return toolErr(err)
	}
	if oldS == "" {
		return "error: old must not be empty; use write_file to create a file", nil
	}
	res, err := tb.sh(ctx, guard+`cat -- "$1"`, nil, full)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "error: cannot read " + p + ": " + strings.TrimSpace(string(res.Output)), nil
	}
	content := string(res.Output)
	switch n := strings.Count(content, oldS); n {
	case 0:
		return "error: old text not found in " + p + "; read the file and copy the exact text, whitespace included", nil
	case 1:
	default:
		return fmt.Sprintf("error: old text occurs %d times in %s; include more surrounding lines so it is unique", n, p), nil
	}
	at := strings.Index(content, oldS)
	updated := content[:at] + newS + content[at+len(oldS):]
	if err := tb.write(ctx, full, updated); err != nil {
		return toolErr(err)
	}
	line := strings.Count(content[:at], "\n") + 1
	return fmt.Sprintf("edited %s: replaced %d line(s) at line %d with %d line(s)", p, strings.Count(oldS, "\n")+1, line, strings.Count(newS, "\n")+1), nil
}

func (tb *toolbox) write(ctx context.Context, full, content string) error {
	res, err := tb.sh(ctx, guard+`mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`, []byte(content), full)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 && res.DiskFull {
		return fmt.Errorf("%s (%s)", strings.TrimSpace(string(res.Output)), res.DiskNote)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s", strings.TrimSpace(string(res.Output)))
	}
	return nil
}

func (tb *toolbox) writeFile(ctx context.Context, a map[string]any) (string, error) {
	p, err := str(a, "path", true)
	if err != nil {
		return toolErr(err)
	}
	content, err := str(a, "content", true)
	if err != nil {
		return toolErr(err)
	}
	full, err := confine(p)
	if err != nil {
		return toolErr(err)
	}
	if err := tb.write(ctx, full, content); err != nil {
		return toolErr(err)
	}
	return fmt.Sprintf("wrote %s (%d bytes)", p, len(content)), nil
}

func (tb *toolbox) run(ctx context.Context, a map[string]any) (string, error) {
	cmd, err := str(a, "command", true)
	if err != nil {
		return toolErr(err)
	}
	secs, err := num(a, "timeout_s", 300)
	if err != nil {
		return toolErr(err)
	}
	timeout := time.Duration(min(max(secs, 1), 1800)) * time.Second
	if tb.timeout > 0 && timeout > tb.timeout {
		timeout = tb.timeout
	}
	res, err := tb.exec.Exec(ctx, sandbox.Command{Args: []string{"sh", "-c", cmd}, Timeout: timeout})
	if err != nil {
		return "", err
	}
	out := string(res.Output)
	if len(out) > maxToolOutput {
		out = "[output truncated: showing the last 16 KiB]\n" + out[len(out)-maxToolOutput:]
	}
	note := ""
	if res.TimedOut {
		note = " (timed out)"
	}
	if res.DiskFull {
		out += "\n[sandgate: " + res.DiskNote + "]"
	}
	return fmt.Sprintf("exit code %d%s\n%s", res.ExitCode, note, out), nil
}
