package inbox

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// pending is what waits for a person: the nav's counts.
type pending struct {
	Handoffs, Reviews int
}

// pendingCache shares one count among every page and live stream for a
// poll interval: counting reads every review entry, and each open stream
// counted for itself on every tick (n streams, n reads of every entry per
// tick). The server's own writes (any POST) forget it, so the page a
// decision redirects to counts afresh.
type pendingCache struct {
	mu  sync.Mutex
	at  time.Time
	gen uint64
	p   pending
}

// pendingNow is the nav's counts, at most one poll interval old (and
// never older than the index's generation or the server's last write).
func (s *Server) pendingNow() pending {
	c := &s.pend
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := s.index.Generation()
	if c.at.IsZero() || gen != c.gen || time.Since(c.at) >= s.opts.Poll {
		c.p, c.at, c.gen = s.countPending(), time.Now(), gen
	}
	return c.p
}

// forgetPending drops the shared count (after a write of the server's).
func (s *Server) forgetPending() {
	s.pend.mu.Lock()
	s.pend.at = time.Time{}
	s.pend.mu.Unlock()
}

// countPending counts handed-off runs (from the index) and pending review
// entries (the queues are small and read directly).
func (s *Server) countPending() pending {
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
