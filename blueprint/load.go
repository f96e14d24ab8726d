package blueprint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// Option configures loading.
type Option func(*options)

type options struct {
	types          TypeSet
	allowEnv       []string
	allowEndpoints []string
}

// WithTypes tells the loader which node types exist besides the built-in
// terminals. Without it every non-terminal node type is unknown.
func WithTypes(ts TypeSet) Option { return func(o *options) { o.types = ts } }

// Load reads and validates the blueprint at path. On failure the error is a
// [Diagnostics] listing every problem (use errors.As), or an *os.PathError
// when the file cannot be read.
func Load(path string, opts ...Option) (*Blueprint, error) {
	src, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read blueprint: %w", err)
	}
	return Parse(path, src, opts...)
}

// MaxFileBytes caps a blueprint file: a blueprint is a page or two of
// YAML, and a path from an MCP call or a script may name anything.
const MaxFileBytes = 1 << 20

// readFile reads a blueprint file, refusing what is not a regular file
// (a FIFO would hang the reader, /dev/zero would never end) and what is
// larger than MaxFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f)
}

// ReadOpen reads a blueprint from a file opened without waiting for a
// writer (O_NONBLOCK, so a FIFO is seen for what it is): what is not a
// regular file or is larger than MaxFileBytes is refused.
func ReadOpen(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(src) > MaxFileBytes {
		err = &os.PathError{Op: "read", Path: f.Name(), Err: fmt.Errorf("larger than %d bytes: not a blueprint", MaxFileBytes)}
	}
	return src, err
}

// Parse validates a blueprint held in memory; name is used in diagnostics.
// Warnings that do not stop the blueprint are kept in Blueprint.Warnings.
func Parse(name string, src []byte, opts ...Option) (*Blueprint, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	r := newReporter(name, src)
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			r.errorf(Pos{1, 1}, "", "the file is empty: a blueprint needs at least version, name, start and nodes")
		} else {
			syntaxError(r, src, err)
		}
		return nil, r.diags
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		r.errorf(posOf(&extra), "", "a blueprint file holds one YAML document; found a second one")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	bp := &Blueprint{File: name, Inputs: map[string]*Input{}, Nodes: map[string]*Node{}, Source: src, Types: o.types,
		Budget: Budget{Answers: DefaultAnswers}}
	d := &decoder{r: r, types: o.types, bp: bp, unsure: map[string]bool{}, badIDs: map[string]bool{}, suggested: map[string]bool{}}
	if root.Kind != yaml.MappingNode {
		r.errorf(posOf(root), "", "a blueprint is a mapping with version, name, start and nodes, got %s", describe(root))
		return nil, r.diags
	}
	d.root(root)
	d.checkGraph()
	d.checkArgvRefs()
	d.checkCredentials(o)
	bp.env = buildEnv(bp, o.types)
	d.compileExprs()
	sortDiagnostics(r.diags)
	if r.diags.HasErrors() {
		return nil, r.diags
	}
	bp.Warnings = r.diags.Warnings()
	return bp, nil
}
