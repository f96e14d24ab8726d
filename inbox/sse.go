package inbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/runtime"
)

// eventStream streams a run's new journal lines as server-sent events. It
// polls the journal's size (the journal is append-only) and sends each
// complete new line; the page's script then fetches the live fragment.
// The stream ends once the run's journal is closed or the client leaves.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	_, _, d, err := s.runRoot(r)
	if err != nil {
		notFound(w, err)
		return
	}
	defer d.Close()
	fl, done := s.openStream(w)
	if fl == nil {
		return
	}
	defer done()
	offset, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	rn := runningOf(d)
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	_, _ = io.WriteString(w, ": stream of "+d.id+"\n\n")
	// The page was drawn before this stream opened, and runningOf took
	// the output's size as it is now: what a node wrote in between would
	// never be announced (a command that prints once and then sleeps
	// stayed blank on its page). So a running node that has output has
	// the page fetch it once, first.
	if rn.hasOutput() {
		_, _ = io.WriteString(w, "event: output\ndata: {}\n\n")
	}
	fl.Flush()
	for {
		lines, next, closed := newLines(d, offset)
		offset = next
		for _, l := range lines {
			rn.see(l)
			_, _ = w.Write([]byte("event: journal\ndata: "))
			_, _ = w.Write(l)
			_, _ = w.Write([]byte("\n\n"))
		}
		// A running node's output (its transcript, its command's
		// output) grows between
		// journal lines: the page is told to fetch it.
		if len(lines) == 0 && rn.grew(d) {
			_, _ = io.WriteString(w, "event: output\ndata: {}\n\n")
			lines = append(lines, nil)
		}
		if len(lines) > 0 {
			fl.Flush()
		}
		// A harness that died leaves no run_closed: its pid file says
		// it is gone (read after the journal, so no line is missed).
		if !closed && len(lines) == 0 {
			alive, _ := runtime.AliveIn(d.Root)
			closed = !alive
		}
		if closed {
			_, _ = io.WriteString(w, "event: closed\ndata: {}\n\n")
			fl.Flush()
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// running are the attempts a stream has seen start and not end, with the
// size of their transcript and output when last looked at.
type running map[string]int64

func runningOf(d *runDir) running {
	rn := running{}
	for _, a := range d.events().Attempts {
		if a.End.IsZero() {
			rn[a.Node+"/"+itoa(a.N)] = 0
		}
	}
	rn.grew(d)
	return rn
}

// see follows one journal line: an attempt starts or ends.
func (rn running) see(line []byte) {
	var ev struct {
		Type, Node string
		Attempt    int
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch k := ev.Node + "/" + itoa(ev.Attempt); ev.Type {
	case string(runtime.EvNodeStarted):
		rn[k] = 0
	case string(runtime.EvNodeFinished), string(runtime.EvNodeCanceled):
		delete(rn, k)
	}
}

// hasOutput reports whether a running attempt has written to its
// transcript or output.
func (rn running) hasOutput() bool {
	for _, size := range rn {
		if size > 0 {
			return true
		}
	}
	return false
}

// grew reports whether a running attempt's transcript or output changed
// size.
func (rn running) grew(d *runDir) bool {
	changed := false
	for k, old := range rn {
		var size int64
		for _, f := range []string{"transcript.jsonl", liveOutput} {
			name := "nodes/" + k + "/" + f
			if st, err := d.Stat(name); index.ValidRel(name) && err == nil {
				size += st.Size()
			}
		}
		if size != old {
			rn[k], changed = size, true
		}
	}
	return changed
}

// openStream takes one of the live streams' places and starts an
// event-stream response; nil when none is free (done gives the place
// back).
func (s *Server) openStream(w http.ResponseWriter) (fl http.Flusher, done func()) {
	select {
	case s.streams <- struct{}{}:
	default:
		// The browser's EventSource retries by itself; the page still
		// works without live updates.
		w.Header().Set("Retry-After", "5")
		http.Error(w, "inbox: too many live streams; try again shortly", http.StatusServiceUnavailable)
		return nil, nil
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		<-s.streams
		http.Error(w, "inbox: streaming unsupported", http.StatusInternalServerError)
		return nil, nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	return fl, func() { <-s.streams }
}

// streamWindow is how much of the journal one poll reads; maxStreamLine
// is the longest line sent as it is. The page only needs to know that
// something happened (it fetches the live fragment), so a longer line is
// sent as a short note of its size, and a line longer than the window is
// skipped to its end: no line, however long, stops the stream.
const (
	streamWindow  = 8 << 20
	maxStreamLine = 1 << 20
)

// newLines reads the complete journal lines after offset; closed reports
// that the run's journal has ended (run_closed).
func newLines(d *runDir, offset int64) ([][]byte, int64, bool) {
	f, st, err := index.OpenRegular(d.Root, "events.jsonl")
	if err != nil {
		return nil, offset, false
	}
	defer f.Close()
	if st.Size() <= offset {
		return nil, offset, false
	}
	buf := make([]byte, min(st.Size()-offset, streamWindow))
	n, _ := f.ReadAt(buf, offset)
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		if n < streamWindow {
			return nil, offset, false // a line still being written
		}
		next, ok := lineEnd(f, offset+int64(n))
		if !ok {
			return nil, offset, false
		}
		return [][]byte{oversized(next - offset)}, next + 1, false
	}
	var out [][]byte
	closed := false
	for _, l := range bytes.Split(buf[:end], []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			l, c := streamLine(l)
			closed = closed || c
			out = append(out, l)
		}
	}
	return out, offset + int64(end) + 1, closed
}

// streamLine is what the stream sends for one journal line, and whether
// it closes the run. The journal may hold lines no runtime wrote (it can
// sit on shared storage): a carriage return would end the data line for
// an EventSource and let the rest forge events, so a line that is not
// JSON, or has one, goes as a note of its size; and only the line's own
// type closes the stream, not a value spelling "type":"run_closed".
func streamLine(l []byte) ([]byte, bool) {
	if len(l) > maxStreamLine {
		return oversized(int64(len(l))), false
	}
	var ev struct{ Type string }
	if bytes.IndexByte(l, '\r') >= 0 || json.Unmarshal(l, &ev) != nil {
		return []byte(`{"type":"unreadable_line","bytes":` + strconv.Itoa(len(l)) + `}`), false
	}
	return l, ev.Type == string(runtime.EvRunClosed)
}

// lineEnd finds the next newline at or after from.
func lineEnd(f io.ReaderAt, from int64) (int64, bool) {
	chunk := make([]byte, 1<<20)
	for {
		n, err := f.ReadAt(chunk, from)
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			return from + int64(i), true
		}
		if err != nil {
			return 0, false
		}
		from += int64(n)
	}
}

// oversized stands in for a journal line too long to stream.
func oversized(size int64) []byte {
	return []byte(`{"type":"oversized_line","bytes":` + strconv.FormatInt(size, 10) + `}`)
}
