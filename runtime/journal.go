package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sandgate/sandgate/secrets"
)

// Journal appends events to events.jsonl. Writes are buffered and made
// durable by Sync, which the runtime calls at every node boundary.
type Journal struct {
	f    *os.File
	w    *bufio.Writer
	seq  int
	sync bool
	// redact removes credentials from every event before it is written
	// and before the run sees it back, so a live run and its replay agree.
	redact *secrets.Redactor
}

// openJournal opens (or creates) a journal for appending; seq continues
// from the last recorded event.
func openJournal(path string, lastSeq int, sync bool, redact *secrets.Redactor) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	return &Journal{f: f, w: bufio.NewWriterSize(f, 64<<10), seq: lastSeq, sync: sync, redact: redact}, nil
}

// Append numbers and writes one event and returns it as a reader of the
// journal will see it (after a JSON round trip), so live runs and replays
// feed the scheduler identical values.
func (j *Journal) Append(ev Event) (Event, error) {
	j.seq++
	ev.Seq = j.seq
	b, err := json.Marshal(ev)
	if err != nil {
		return ev, fmt.Errorf("journal: encode %s: %w", ev.Type, err)
	}
	b = j.redact.JSON(b)
	if len(b) >= MaxJournalLine {
		// Every event is bounded before it gets here (boundEvent,
		// checkInputs, Answer): a line this long is a bug, refused
		// rather than written where readers could not hold it.
		j.seq--
		return ev, fmt.Errorf("journal: %s event is %d bytes; a line holds less than %d", ev.Type, len(b), MaxJournalLine)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		return ev, fmt.Errorf("journal: decode %s: %w", ev.Type, err)
	}
	if _, err := j.w.Write(append(b, '\n')); err != nil {
		return ev, fmt.Errorf("journal: write: %w", err)
	}
	return back, nil
}

// Sync flushes buffered events and, when durability is on, fsyncs them.
func (j *Journal) Sync() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("journal: flush: %w", err)
	}
	if j.sync {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("journal: fsync: %w", err)
		}
	}
	return nil
}

// Close flushes and closes the journal.
func (j *Journal) Close() error {
	return errors.Join(j.Sync(), j.f.Close())
}

// ReadJournal reads every event of a journal. A torn last line, left by a
// crash in the middle of a write, is dropped; a bad line elsewhere is an
// error.
func ReadJournal(path string) ([]Event, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var out []Event
	r := bufio.NewReader(bytes.NewReader(b))
	for line := 1; ; line++ {
		raw, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var ev Event
			if jerr := json.Unmarshal(raw, &ev); jerr != nil {
				if err == io.EOF {
					return out, nil // torn tail
				}
				return nil, fmt.Errorf("%s:%d: bad journal entry: %w", path, line, jerr)
			}
			out = append(out, ev)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read journal: %w", err)
		}
	}
}
