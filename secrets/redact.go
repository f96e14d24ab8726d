package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the shortest value the redactor removes. Shorter values ("1",
// "true", "dev") occur everywhere by chance: replacing them would mangle
// logs and JSON without protecting anything, since a credential that short
// offers no protection anyway.
const MinLen = 6

// Redactor replaces the values of harness credentials with
// "[redacted NAME]", and anything shaped like a GitHub App installation
// token (Patterns) with "[redacted GitHub installation token]". Values
// can be added while the run writes (Add): a token the harness mints
// mid-run is redacted from then on by every writer that holds the run's
// redactor. nil redacts nothing. It is safe for concurrent use.
type Redactor struct {
	mu sync.Mutex // serializes Add
	st atomic.Pointer[state]
}

// state is one immutable set of values; Add swaps in a new one.
type state struct {
	pairs [][2]string // name, value
	names []string
	// forms holds every spelling of every value, longest first so a value
	// that contains another is replaced whole.
	forms []form
}

type form struct{ text, marker string }

// New returns a redactor for these name → value pairs. Values shorter than
// MinLen are skipped.
func New(values map[string]string) *Redactor {
	var pairs [][2]string
	for name, v := range values {
		pairs = append(pairs, [2]string{name, v})
	}
	r := &Redactor{}
	r.st.Store(build(pairs))
	return r
}

// Add redacts value as NAME from now on. The harness calls it for a
// credential it obtains during the run (a minted token) before the
// credential is used, so no text the credential reaches afterwards is
// written with it.
func (r *Redactor) Add(name, value string) {
	if r == nil || len(value) < MinLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.state()
	r.st.Store(build(append(slices.Clone(old.pairs), [2]string{name, value})))
}

func (r *Redactor) state() *state {
	if st := r.st.Load(); st != nil {
		return st
	}
	return &state{}
}

func build(pairs [][2]string) *state {
	st := &state{}
	seen, named := map[string]bool{}, map[string]bool{}
	for _, p := range pairs {
		name, v := p[0], p[1]
		if len(v) < MinLen {
			continue
		}
		st.pairs = append(st.pairs, p)
		if !named[name] {
			named[name] = true
			st.names = append(st.names, name)
		}
		marker := "[redacted " + name + "]"
		for _, text := range spellings(v) {
			if !seen[text] {
				seen[text] = true
				st.forms = append(st.forms, form{text, marker})
			}
		}
	}
	sort.Strings(st.names)
	sort.Slice(st.forms, func(i, j int) bool {
		if len(st.forms[i].text) != len(st.forms[j].text) {
			return len(st.forms[i].text) > len(st.forms[j].text)
		}
		return st.forms[i].text < st.forms[j].text
	})
	return st
}

// spellings are the ways a value shows up in what the harness writes: as
// is, escaped inside a JSON string, and escaped by Go's %q.
func spellings(v string) []string {
	out := []string{v}
	if j, err := json.Marshal(v); err == nil {
		out = append(out, string(j[1:len(j)-1]))
	}
	q := strconv.Quote(v)
	return append(out, q[1:len(q)-1])
}

// FromEnv builds the redactor of one run from an environment (os.Environ's
// form): the value of every variable whose name IsCredentialName, plus the
// variables named in extra (token_env and api_key_env fields, the agent's
// key), whatever their names.
func FromEnv(environ []string, extra ...string) *Redactor {
	want := map[string]bool{}
	for _, n := range extra {
		want[n] = true
	}
	values := map[string]string{}
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if ok && (want[name] || IsCredentialName(name)) {
			values[name] = v
		}
	}
	return New(values)
}

// FromOS is FromEnv over this process's environment.
func FromOS(extra ...string) *Redactor { return FromEnv(os.Environ(), extra...) }

// Names lists the variables whose values are redacted.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	return r.state().names
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	if st := r.state(); len(st.forms) > 0 {
		s = st.replaceForms(s)
	}
	return patterns(s)
}

// Bytes redacts b; it returns b itself when nothing matched.
func (r *Redactor) Bytes(b []byte) []byte {
	if _, ok := r.find(b); !ok {
		return b
	}
	return []byte(r.String(string(b)))
}

// Find reports the name of the first credential whose value s contains.
func (r *Redactor) Find(s []byte) (string, bool) {
	f, ok := r.find(s)
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(f.marker, "[redacted "), "]"), true
}

func (r *Redactor) find(b []byte) (form, bool) {
	if r == nil {
		return form{}, false
	}
	for _, f := range r.state().forms {
		if bytes.Contains(b, []byte(f.text)) {
			return f, true
		}
	}
	if hasPattern(b) {
		return form{marker: patternMarker}, true
	}
	return form{}, false
}

// JSON redacts a JSON document inside its strings only, so the result is
// still valid JSON even when a value also appears as, say, part of a number.
// Input that is not JSON is redacted as plain bytes.
func (r *Redactor) JSON(b []byte) []byte {
	if _, ok := r.find(b); !ok {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return r.Bytes(b)
	}
	out, err := json.Marshal(r.walk(v))
	if err != nil {
		return r.Bytes(b)
	}
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

func (r *Redactor) walk(v any) any {
	switch t := v.(type) {
	case string:
		return r.String(t)
	case []any:
		for i := range t {
			t[i] = r.walk(t[i])
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[r.String(k)] = r.walk(x)
		}
		return out
	}
	return v
}

// Writer wraps w so every Write is redacted before it reaches w. Each Write
// is redacted on its own: callers write whole records (a line, a JSON
// document), as every writer in the harness does, so a value is never split
// across two writes. A value added later is redacted from then on.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r == nil {
		return w
	}
	return &writer{r: r, w: w}
}

type writer struct {
	r *Redactor
	w io.Writer
}

// Unwrap returns the writer redacted text goes to, so a caller can ask
// whether the destination is a terminal (termtext.IsTerminal).
func (w *writer) Unwrap() io.Writer { return w.w }

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

type ctxKey struct{}

// NewContext returns a context carrying the run's redactor, for hooks whose
// signatures predate it (the runtime's Prepare).
func NewContext(ctx context.Context, r *Redactor) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext returns the redactor a context carries, or nil.
func FromContext(ctx context.Context) *Redactor {
	r, _ := ctx.Value(ctxKey{}).(*Redactor)
	return r
}
