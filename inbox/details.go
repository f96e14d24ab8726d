package inbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/termtext"
	"github.com/sandgate/sandgate/nodes/verdict"
)

// verifyTable is verify.json as rows, one per gate.
type verifyTable struct {
	Pass *bool
	Rows []verifyRow
}

type verifyRow struct {
	Gate, Kind, Reason, Tests, Details string
	Pass                               bool
	DurationMS                         int64
}

func verifyOf(d *runDir) *verifyTable {
	b, _, err := index.ReadCapped(d.Root, "verify.json", 4<<20)
	if err != nil {
		return nil
	}
	var v struct {
		Pass  *bool                         `json:"pass"`
		Gates map[string]verdict.GateResult `json:"gates"`
	}
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	t := &verifyTable{Pass: v.Pass}
	for name, g := range v.Gates {
		row := verifyRow{Gate: name, Kind: g.Kind, Pass: g.Pass, Reason: g.Reason, DurationMS: g.DurationMS}
		if g.Tests != nil {
			row.Tests = fmt.Sprintf("%d passed, %d failed, %d skipped", g.Tests.Passed, g.Tests.Failed, g.Tests.Skipped)
		}
		if len(g.Details) > 0 {
			row.Details = prettyJSON(g.Details)
		}
		t.Rows = append(t.Rows, row)
	}
	slices.SortFunc(t.Rows, func(a, b verifyRow) int { return strings.Compare(a.Gate, b.Gate) })
	return t
}

// transcript is one agent attempt's conversation.
type transcript struct {
	Node    string
	N       int
	Entries []turn
	More    int
	// Earlier says a running transcript has turns before those read.
	Earlier bool
	// Output is the end of a running attempt's output.log (a command's
	// output as it comes), terminal escapes made visible; OutputBefore
	// the bytes before that end.
	Output       string
	OutputBefore int64
}

type turn struct {
	Kind, Role, Text string
	Tools            []toolCall
}

type toolCall struct{ Name, Args, Result string }

const transcriptLines = 400

func transcripts(d *runDir, v *index.View) []transcript {
	var out []transcript
	for _, a := range v.Attempts {
		name := fmt.Sprintf("nodes/%s/%d/transcript.jsonl", a.Node, a.N)
		if !index.ValidRel(name) {
			continue
		}
		lines, more := d.jsonLines(name, transcriptLines)
		if len(lines) == 0 {
			continue
		}
		t := transcript{Node: a.Node, N: a.N, More: more}
		for _, l := range lines {
			t.Entries = append(t.Entries, turnOf(l))
		}
		out = append(out, t)
	}
	return out
}

// liveOutput is the file in an attempt's directory a shell node writes
// its command's output to as it runs; outputTail how much of its end the
// run page shows.
const (
	liveOutput = "output.log"
	outputTail = 64 << 10
)

// runningTail is how much of a running attempt's transcript the live
// part of the run page shows, and runningTranscriptTail how much of the
// file's end is read for it (a turn longer than that is not shown live;
// the file has it).
const (
	runningTail           = 30
	runningTranscriptTail = 1 << 20
)

// runningTranscripts are the ends of the transcripts of the attempts
// still running: the output a person watches while a node works.
func runningTranscripts(d *runDir, v *index.View) []transcript {
	var out []transcript
	for _, a := range v.Attempts {
		name := fmt.Sprintf("nodes/%s/%d/transcript.jsonl", a.Node, a.N)
		if !a.End.IsZero() || !index.ValidRel(name) {
			continue
		}
		// Only the transcript's end is read: every open page fetches
		// this at each change, and decoding a long transcript whole
		// each time (40 MiB: 1.7 s and 180 MiB a refresh) let a chatty
		// agent starve the server, and still showed its first turns.
		b, before, _ := readTail(d.Root, name, runningTranscriptTail)
		if before > 0 { // the first line is a piece of one
			_, b, _ = bytes.Cut(b, []byte("\n"))
		}
		lines, _ := decodeLines(b, 1<<20)
		t := transcript{Node: a.Node, N: a.N, More: max(len(lines)-runningTail, 0), Earlier: before > 0}
		for _, l := range lines[t.More:] {
			t.Entries = append(t.Entries, turnOf(l))
		}
		if b, before, err := readTail(d.Root, strings.TrimSuffix(name, "transcript.jsonl")+liveOutput, outputTail); err == nil {
			t.Output, t.OutputBefore = termtext.Text(strings.ReplaceAll(string(b), "\r\n", "\n")), before
		}
		out = append(out, t)
	}
	return out
}

func turnOf(l map[string]any) turn {
	data, _ := l["data"].(map[string]any)
	t := turn{Kind: str(l["kind"])}
	switch t.Kind {
	case "completion":
		t.Role, t.Text = str(data["role"]), str(data["content"])
		calls, _ := data["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			fn, _ := cm["function"].(map[string]any)
			t.Tools = append(t.Tools, toolCall{Name: str(fn["name"]), Args: str(fn["arguments"])})
		}
	case "tool":
		t.Tools = []toolCall{{Name: str(data["name"]), Args: str(data["arguments"]), Result: clip(str(data["result"]), 8<<10)}}
	default:
		b, _ := json.Marshal(data)
		t.Text = clip(string(b), 2<<10)
	}
	return t
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n… (cut)"
}

// prettyJSON indents v without json's HTML escaping: the template escapes
// it, and a test named "a<b" should read as such, not as "a\u003cb".
func prettyJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return strings.TrimRight(b.String(), "\n")
}
