package inbox

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// pending is what waits for a person: the nav's counts.
type pending struct {
	Handoffs, Reviews int
}

// pendingNow counts handed-off runs (from the index) and pending review
// entries (the queues are small and read directly).
func (s *Server) pendingNow() pending {
	var p pending
	for _, r := range s.index.Runs() {
		if r.Status == "handed_off" {
			p.Handoffs++
		}
	}
	for _, e := range s.reviewEntries() {
		if e.Status == "pending" {
			p.Reviews++
		}
	}
	return p
}

// changesStream tells list pages that something changed: an event
// "change" carrying the nav's counts whenever the index's generation or
// the counts move. The page then fetches itself again; nothing from the
// stream is inserted as HTML (the counts are set as text).
func (s *Server) changesStream(w http.ResponseWriter, r *http.Request) {
	fl, done := s.openStream(w)
	if fl == nil {
		return
	}
	defer done()
	_, _ = io.WriteString(w, ": changes\n\n")
	fl.Flush()
	tick := time.NewTicker(max(s.opts.Poll, 250*time.Millisecond))
	defer tick.Stop()
	gen, last := s.index.Generation(), s.pendingNow()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		g, p := s.index.Generation(), s.pendingNow()
		if g == gen && p == last {
			continue
		}
		gen, last = g, p
		if _, err := fmt.Fprintf(w, "event: change\ndata: {\"handoffs\":%d,\"reviews\":%d}\n\n", p.Handoffs, p.Reviews); err != nil {
			return
		}
		fl.Flush()
	}
}
