package blueprint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity says whether a diagnostic stops the blueprint from loading.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one positioned problem in a blueprint.
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Path     string   `json:"path,omitempty"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Snippet is the source line the diagnostic points at, without the
	// trailing newline.
	Snippet string `json:"snippet,omitempty"`
}

// Error renders the diagnostic as "file:line:col: path: message".
func (d Diagnostic) Error() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
	}
	b.WriteString(": ")
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Pretty renders the diagnostic followed by its source line and a caret under
// the column, the way a compiler does.
func (d Diagnostic) Pretty() string {
	s := d.Error()
	if d.Snippet == "" || d.Col <= 0 {
		return s
	}
	line := strings.ReplaceAll(d.Snippet, "\t", " ")
	col := d.Col - 1
	if col > len(line) {
		col = len(line)
	}
	line, col = snippetWindow(line, col)
	return s + "\n    " + line + "\n    " + strings.Repeat(" ", col) + "^"
}

// snippetWidth is how much of a long source line Pretty shows, around
// the column: a hostile file's one line can be a megabyte.
const snippetWidth = 120

// snippetWindow cuts line to about snippetWidth bytes around col (on
// character boundaries, "…" marking each cut) and moves col with it.
func snippetWindow(line string, col int) (string, int) {
	if len(line) <= snippetWidth {
		return line, col
	}
	start := max(0, col-snippetWidth/2)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	end := min(len(line), start+snippetWidth)
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end++
	}
	out, col := line[start:end], col-start
	if start > 0 {
		out, col = "…"+out, col+1
	}
	if end < len(line) {
		out += "…"
	}
	return out, col
}

// Diagnostics is a list of problems. As an error it reports every entry; use
// errors.As to get at the list.
type Diagnostics []Diagnostic

// Error joins every diagnostic, one per line.
func (ds Diagnostics) Error() string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap exposes each diagnostic to errors.Is and errors.As.
func (ds Diagnostics) Unwrap() []error {
	errs := make([]error, len(ds))
	for i, d := range ds {
		errs[i] = d
	}
	return errs
}

// Pretty renders every diagnostic with its snippet and caret.
func (ds Diagnostics) Pretty() string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Pretty()
	}
	return strings.Join(parts, "\n")
}

// JSON renders the diagnostics as a JSON array for editors and CI.
func (ds Diagnostics) JSON() []byte {
	if ds == nil {
		ds = Diagnostics{}
	}
	b, _ := json.MarshalIndent(ds, "", "  ")
	return b
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(SeverityError) }

// Warnings returns only the warning-severity diagnostics.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(SeverityWarning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// sortDiagnostics orders by position so output reads top to bottom.
func sortDiagnostics(ds Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].Line != ds[j].Line {
			return ds[i].Line < ds[j].Line
		}
		return ds[i].Col < ds[j].Col
	})
}

// reporter collects diagnostics for one file.
type reporter struct {
	file  string
	lines []string
	diags Diagnostics
}

func newReporter(file string, src []byte) *reporter {
	return &reporter{file: file, lines: strings.Split(string(src), "\n")}
}

func (r *reporter) add(sev Severity, pos Pos, path, format string, args ...any) {
	d := Diagnostic{File: r.file, Line: pos.Line, Col: pos.Col, Path: path,
		Severity: sev, Message: fmt.Sprintf(format, args...)}
	if pos.Line > 0 && pos.Line <= len(r.lines) {
		d.Snippet = strings.TrimRight(r.lines[pos.Line-1], "\r")
	}
	r.diags = append(r.diags, d)
}

func (r *reporter) errorf(pos Pos, path, format string, args ...any) {
	r.add(SeverityError, pos, path, format, args...)
}

func (r *reporter) warnf(pos Pos, path, format string, args ...any) {
	r.add(SeverityWarning, pos, path, format, args...)
}

// adopt takes diagnostics produced elsewhere (node type checks), filling in
// the file name and snippet.
func (r *reporter) adopt(ds []Diagnostic) {
	for _, d := range ds {
		if d.Severity == "" {
			d.Severity = SeverityError
		}
		r.add(d.Severity, Pos{d.Line, d.Col}, d.Path, "%s", d.Message)
	}
}
