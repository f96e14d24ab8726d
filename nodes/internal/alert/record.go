package alert

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// File is the delivery record's name in the run directory.
const File = "alerts-delivered.jsonl"

// The statuses of a record line. queued carries the event and the sinks
// it is owed to; delivered, gave_up, refused and dropped end what a sink
// is owed; attempt_failed is one failed attempt that will be retried;
// undelivered is what a closing run abandoned (resent on resume).
const (
	StatusQueued      = "queued"
	StatusFailed      = "attempt_failed"
	StatusDelivered   = "delivered"
	StatusGaveUp      = "gave_up"
	StatusRefused     = "refused"
	StatusDropped     = "dropped"
	StatusUndelivered = "undelivered"
)

// Record is one line of alerts-delivered.jsonl.
type Record struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	At         time.Time `json:"at"`
	Sink       string    `json:"sink,omitempty"`
	Attempts   int       `json:"attempts,omitempty"`
	HTTPStatus int       `json:"http_status,omitempty"`
	Error      string    `json:"error,omitempty"`
	Event      *Event    `json:"event,omitempty"`
	Sinks      []string  `json:"sinks,omitempty"`
}

// final reports whether a record ends what its sink is owed.
func (r Record) final() bool {
	switch r.Status {
	case StatusDelivered, StatusGaveUp, StatusRefused, StatusDropped:
		return true
	}
	return false
}

// recorder appends records, each synced: an alert is on disk before any
// sink is tried, so a crash loses none.
type recorder struct {
	mu   sync.Mutex
	path string
}

func (r *recorder) write(rec Record) {
	if rec.At.IsZero() {
		rec.At = time.Now().UTC()
	}
	rec.Error = scrub(rec.Error)
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return // the alert still goes out; the run directory is gone or full
	}
	if _, err := f.Write(append(b, '\n')); err == nil {
		_ = f.Sync()
	}
	_ = f.Close()
}

// owed reads runDir's record: for each sink name, the events queued for
// it that no final record ends, in order.
func owed(runDir string) (map[string][]Event, error) {
	f, err := os.Open(filepath.Join(runDir, File))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type due struct {
		ev    Event
		sinks []string
	}
	var order []string
	queued := map[string]*due{}
	done := map[[2]string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue // a line cut short by a crash
		}
		switch {
		case r.Status == StatusQueued && r.Event != nil:
			order, queued[r.ID] = append(order, r.ID), &due{*r.Event, r.Sinks}
		case r.final():
			done[[2]string{r.ID, r.Sink}] = true
		}
	}
	out := map[string][]Event{}
	for _, id := range order {
		d := queued[id]
		for _, s := range d.sinks {
			if !done[[2]string{id, s}] {
				out[s] = append(out[s], d.ev)
			}
		}
	}
	return out, sc.Err()
}
