package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/sandgate/sandgate/secrets"
)

// Bounds of what a node attempt puts in the journal. A node's result may
// carry text nobody bounded (an agent's hand-off reason or summary, a
// tool's error, a repository's test names): the journal keeps a few KiB
// of each, the attempt directory keeps the whole text, redacted, and no
// journal line grows past MaxJournalLine, which every reader of the
// journal (the inbox's live stream among them) can hold.
const (
	// MaxText caps a reason, an error or a string output in the journal.
	MaxText = 4 << 10
	// MaxFeedback caps an attempt's feedback in the journal: a gate's
	// feedback is what the agent fixes next, so it keeps more.
	MaxFeedback = 64 << 10
	// MaxJournalLine caps one line of events.jsonl.
	MaxJournalLine = 1 << 20
	// maxListItems caps a list output (failing tests, files) in the
	// journal.
	maxListItems = 1000
)

// CutText returns s when it is at most limit bytes, else its start (on a
// character boundary) and a note saying how much was left out and where
// the whole text is, limit bytes in all (unless the note alone is longer),
// so a text cut once is not cut again by a later bound. Redact s first: a
// cut through a credential would leave a piece no redactor recognizes.
func CutText(s string, limit int, whole string) string {
	if len(s) <= limit {
		return s
	}
	note := func(keep int) string {
		return fmt.Sprintf("\n… [%d more bytes; the whole text is in %s]", len(s)-keep, whole)
	}
	keep := max(0, limit-len(note(0)))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + note(keep)
}

// bounder cuts one attempt's event down to the journal's bounds and
// collects the whole texts for the attempt directory.
type bounder struct {
	redact *secrets.Redactor
	// rel is the attempt directory relative to the run directory, for
	// the notes that say where a whole text went.
	rel   string
	files map[string][]byte
}

// boundEvent cuts ev's texts to the journal's bounds and writes each text
// it cut, whole and redacted, into the attempt directory dir (relative to
// the run directory: rel). ev is bounded even when writing those files
// fails, which is the error returned.
func boundEvent(ev *Event, dir, rel string, redact *secrets.Redactor) error {
	b := &bounder{redact: redact, rel: rel, files: map[string][]byte{}}
	ev.Reason = b.text("reason", ev.Reason, MaxText)
	ev.Error = b.text("error", ev.Error, MaxText)
	ev.Feedback = b.text("feedback", ev.Feedback, MaxFeedback)
	if ev.Outputs != nil {
		ev.Outputs = b.outputs(ev)
	}
	if len(b.files) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("keep the attempt's whole texts: %w", err)
	}
	return writeFiles(redact, dir, b.files)
}

// outputs bounds ev.Outputs, in their journal form (JSON values: typed
// lists and structs become []any and maps, as a reader will see them),
// tighter until the line fits; the whole outputs go to outputs.json.
func (b *bounder) outputs(ev *Event) map[string]any {
	raw, err := json.Marshal(ev.Outputs)
	var whole map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &whole)
	}
	if err != nil {
		return map[string]any{"cut": "the outputs could not be recorded: " + err.Error()}
	}
	v, cut := b.value(whole, MaxText, maxListItems, "outputs.json")
	out, _ := v.(map[string]any)
	if lineSize(ev, out) > MaxJournalLine {
		v, _ = b.value(whole, 256, 100, "outputs.json")
		out, _ = v.(map[string]any)
		cut = true
	}
	if lineSize(ev, out) > MaxJournalLine {
		out = map[string]any{"cut": "the outputs were too large for the journal; they are in " + b.where("outputs.json")}
	}
	if cut {
		b.files["outputs.json"] = raw
	}
	return out
}

func (b *bounder) where(name string) string { return filepath.ToSlash(filepath.Join(b.rel, name)) }

// text cuts one field, keeping the whole of it as <field>.txt.
func (b *bounder) text(field, s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = b.redact.String(s)
	name := field + ".txt"
	b.files[name] = []byte(s)
	return CutText(s, limit, b.where(name))
}

// value bounds an output value: strings cut to limit, lists to items
// entries, maps to items keys (sorted, so the cut is the same on every
// run). cut reports that anything was left out.
func (b *bounder) value(v any, limit, items int, whole string) (any, bool) {
	where := b.where(whole)
	switch t := v.(type) {
	case string:
		if len(t) <= limit {
			return t, false
		}
		return CutText(b.redact.String(t), limit, where), true
	case []any:
		n, cut := min(len(t), items), len(t) > items
		out := make([]any, n)
		for i := range n {
			var c bool
			out[i], c = b.value(t[i], limit, items, whole)
			cut = cut || c
		}
		if len(t) > n {
			out = append(out, fmt.Sprintf("… [%d more; all of them are in %s]", len(t)-n, where))
		}
		return out, cut
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		cut := len(keys) > items
		out := make(map[string]any, min(len(keys), items))
		for _, k := range keys[:min(len(keys), items)] {
			v, c := b.value(t[k], limit, items, whole)
			if len(k) > limit {
				out[CutText(b.redact.String(k), limit, where)], c = v, true
			} else {
				out[k] = v
			}
			cut = cut || c
		}
		return out, cut
	}
	return v, false
}

// lineSize is the size of ev's journal line with outputs out.
func lineSize(ev *Event, out map[string]any) int {
	e := *ev
	e.Outputs = out
	line, err := json.Marshal(e)
	if err != nil {
		return MaxJournalLine + 1
	}
	return len(line)
}

// attemptRel is an attempt directory relative to its run directory.
func attemptRel(node string, attempt int) string {
	return filepath.Join("nodes", node, strconv.Itoa(attempt))
}
