package inbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/draw"
	"github.com/sandgate/sandgate/inbox/index"
)

// runDir is one run's directory, opened so that nothing read through it
// can leave it.
type runDir struct {
	*os.Root
	path string
	id   string
}

func openRun(runsDir, id string) (*runDir, error) {
	r, err := openDir(runsDir, id)
	if err != nil {
		return nil, err
	}
	return &runDir{Root: r, path: filepath.Join(runsDir, id), id: id}, nil
}

const fileCap = 256 << 10

func (d *runDir) events() *index.View {
	events, _ := index.ReadEvents(d.Root, "events.jsonl")
	v := index.Fold(events)
	index.MarkInterrupted(v, d.Root)
	if v.ID == "" {
		v.ID = d.id
	}
	return v
}

// blueprint parses the run's saved blueprint.yaml.
func (d *runDir) blueprint(types blueprint.TypeSet) (*blueprint.Blueprint, error) {
	src, _, err := index.ReadCapped(d.Root, "blueprint.yaml", 4<<20)
	if err != nil {
		return nil, err
	}
	var opts []blueprint.Option
	if types != nil {
		opts = append(opts, blueprint.WithTypes(types))
	}
	return blueprint.Parse("blueprint.yaml", src, opts...)
}

// text reads a capped text file; a missing file is empty.
func (d *runDir) text(name string) (string, bool) {
	b, cut, err := index.ReadCapped(d.Root, name, fileCap)
	if err != nil {
		return "", false
	}
	return string(b), cut
}

// jsonLines decodes up to limit lines of a JSONL file into maps and counts
// the rest.
func (d *runDir) jsonLines(name string, limit int) ([]map[string]any, int) {
	b, _, err := index.ReadCapped(d.Root, name, 32<<20)
	if err != nil {
		return nil, 0
	}
	return decodeLines(b, limit)
}

// decodeLines decodes up to limit JSON lines of b into maps and counts
// the rest.
func decodeLines(b []byte, limit int) ([]map[string]any, int) {
	var out []map[string]any
	more := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		if len(out) >= limit {
			more++
			continue
		}
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out, more
}

// attemptFiles lists the files an attempt left in nodes/<node>/<n>/.
func (d *runDir) attemptFiles(node string, n int) []string {
	if !index.ValidName(node) {
		return nil
	}
	dir := "nodes/" + node + "/" + strconv.Itoa(n)
	ents, err := fs.ReadDir(d.FS(), dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && index.ValidName(e.Name()) {
			out = append(out, dir+"/"+e.Name())
		}
	}
	return out
}

// spanOf makes a waterfall row of a trace span, coloured by outcome: a
// node's outcome, an error or cancel status, else "ok" (its kind, stage or
// operation, goes in the label's title: colouring by kind painted a
// failed lint gate green).
func spanOf(name string, start, end time.Time, code, desc string, attrs iter.Seq2[string, any]) draw.Span {
	sp := draw.Span{Label: name, Class: "ok", Start: start, End: end}
	for k, v := range attrs {
		str, _ := v.(string)
		switch k {
		case "sandgate.node.outcome":
			sp.Class = str
		case "sandgate.run.status":
			sp.Class = map[string]string{"succeeded": "pass", "failed": "fail", "handed_off": "handoff", "canceled": "canceled"}[str]
		case "sandgate.stage", "gen_ai.operation.name":
			sp.Kind = str
		}
	}
	if code == "Error" && sp.Class == "ok" {
		sp.Class = "error"
		if desc == "canceled" {
			sp.Class = "canceled"
		}
	}
	if end.IsZero() {
		sp.Class = "running"
	}
	return sp
}

// traceSpans reads trace.json, the stream of spans the run exported.
func (d *runDir) traceSpans() []draw.Span {
	b, _, err := index.ReadCapped(d.Root, "trace.json", 64<<20)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []draw.Span
	for dec.More() {
		var s struct {
			Name               string
			StartTime, EndTime time.Time
			Attributes         []struct {
				Key   string
				Value struct{ Value any }
			}
			Status struct{ Code, Description string }
		}
		if dec.Decode(&s) != nil {
			break
		}
		out = append(out, spanOf(s.Name, s.StartTime, s.EndTime, s.Status.Code, s.Status.Description, func(yield func(string, any) bool) {
			for _, a := range s.Attributes {
				if !yield(a.Key, a.Value.Value) {
					return
				}
			}
		}))
	}
	slices.SortStableFunc(out, func(a, b draw.Span) int { return a.Start.Compare(b.Start) })
	return out
}
