package checks

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/verdict"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Lint runs one or more linters and fails on any diagnostic.
type Lint struct {
	run []command.Command
}

var _ runtime.Node = (*Lint)(nil)

func newLint(spec *blueprint.Node) (runtime.Node, error) {
	c, err := blueprint.Decode[LintConfig](spec)
	if err != nil {
		return nil, err
	}
	return &Lint{run: command.List(c.Run)}, nil
}

// Diagnostic is one finding parsed from a linter's output.
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string {
	switch {
	case d.Line == 0:
		return fmt.Sprintf("%s: %s", d.File, d.Message)
	case d.Col == 0:
		return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Col, d.Message)
}

var (
	// file:line:col: message (go vet, golangci-lint, ruff, gcc, eslint unix)
	diagRE = regexp.MustCompile(`^(?:vet: )?(\.?[\w./@+-]+\.\w+):(\d+)(?::(\d+))?:?\s+(.*)$`)
	// a bare path, as printed by gofmt -l: any name without blanks or
	// colons (gofmt prints non-ASCII names as they are), or a Go file with
	// blanks in its path. gofmt -l exits 0 either way, so a name this
	// misses is an unformatted file that passes.
	bareFileRE = regexp.MustCompile(`^([^\s:]+\.[^\s:./]+|[^:\t]*[^:\s]\.go)$`)
	// eslint's stylish format: "  12:5  error  message  rule" under a file line
	stylishRE = regexp.MustCompile(`^\s+(\d+):(\d+)\s+(error|warning)\s+(.*)$`)
)

// parseDiagnostics extracts diagnostics from linter output in the common
// formats: file:line:col: message, gofmt -l file lists, eslint stylish.
func parseDiagnostics(out string) []Diagnostic {
	var ds []Diagnostic
	current := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := diagRE.FindStringSubmatch(line); m != nil {
			ds = append(ds, Diagnostic{File: strings.TrimPrefix(m[1], "./"), Line: atoi(m[2]), Col: atoi(m[3]), Message: strings.TrimSpace(m[4])})
			continue
		}
		if m := stylishRE.FindStringSubmatch(line); m != nil && current != "" {
			// The file line was a stylish header, not a gofmt -l entry.
			if n := len(ds); n > 0 && ds[n-1].File == current && ds[n-1].Line == 0 {
				ds = ds[:n-1]
			}
			ds = append(ds, Diagnostic{File: current, Line: atoi(m[1]), Col: atoi(m[2]), Message: strings.TrimSpace(m[3] + ": " + m[4])})
			continue
		}
		t := strings.TrimSpace(line)
		if bareFileRE.MatchString(t) && t == line {
			current = strings.TrimPrefix(t, "./")
			ds = append(ds, Diagnostic{File: current, Message: "not formatted (gofmt -l)"})
		}
	}
	return ds
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// Run implements runtime.Node.
func (l *Lint) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	w, fp, start, err := gate.Begin(in)
	if err != nil {
		return nil, err
	}
	var diags []Diagnostic
	var failed []string
	for i, cmd := range l.run {
		args, err := cmd.Args(in)
		if err != nil {
			return nil, err
		}
		// The output streams to the attempt's output.log as the judge box
		// prints it, so the run page shows a running lint.
		live, closeLive := command.Live(in)
		res, err := w.Command(ctx, sandbox.Command{Args: args, Timeout: in.Spec.Timeout, Live: live})
		closeLive()
		if err != nil {
			return nil, err
		}
		saveOutput(in, fmt.Sprintf("lint-%d.log", i), res)
		found := parseDiagnostics(string(res.Output))
		diags = append(diags, found...)
		if res.ExitCode != 0 && len(found) == 0 {
			failed = append(failed, fmt.Sprintf("`%s` exited with %d%s:\n%s", cmd.Display(args), res.ExitCode, feedback.TimedOut(res.TimedOut), feedback.Tail(string(res.Output), 4096)))
		}
	}
	files := map[string]bool{}
	var lines []string
	for _, d := range diags {
		files[d.File] = true
		lines = append(lines, d.String())
	}
	fileList := make([]string, 0, len(files))
	for f := range files {
		fileList = append(fileList, f)
	}
	sort.Strings(fileList)
	res := &runtime.Result{Outputs: map[string]any{"diagnostics": len(diags), "files": fileList}}
	pass := len(diags) == 0 && len(failed) == 0
	reason := ""
	if !pass {
		reason = fmt.Sprintf("%d diagnostic(s)", len(diags))
		res.Feedback = "Lint failed. Fix these problems:\n" + strings.Join(append(lines, failed...), "\n")
	}
	return gate.Finish(in, "lint", fp, start, verdict.GateResult{Pass: pass, Reason: reason}, res)
}
