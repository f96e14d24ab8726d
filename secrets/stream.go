package secrets

import (
	"bytes"
	"io"
	"sync"
)

// Stream wraps w for output that arrives in pieces cut anywhere (a
// running command's output): a credential split across two writes is
// still redacted whole. It holds back the last bytes that could begin a
// credential (fewer than the longest form's length) until more output
// shows they do not, or until Close, which writes them. With nothing to
// redact, writes pass straight through.
func (r *Redactor) Stream(w io.Writer) io.WriteCloser {
	s := &stream{r: r, w: w}
	if r != nil && len(r.forms) > 0 {
		s.hold = len(r.forms[0].text) - 1 // forms are longest first
	}
	return s
}

type stream struct {
	mu   sync.Mutex
	r    *Redactor
	w    io.Writer
	buf  []byte
	hold int
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	cut := s.safeCut()
	if cut == 0 {
		return len(p), nil
	}
	out := s.r.Bytes(s.buf[:cut])
	s.buf = append(s.buf[:0:0], s.buf[cut:]...)
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safeCut is how much of buf can be redacted and written now: all but
// the last hold bytes, less any credential that reaches into them.
func (s *stream) safeCut() int {
	cut := max(len(s.buf)-s.hold, 0)
	if s.hold == 0 || cut == 0 {
		return cut
	}
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range s.r.forms {
			t := []byte(f.text)
			// An occurrence that starts before cut and ends after it.
			from := max(cut-len(t)+1, 0)
			if i := bytes.Index(s.buf[from:min(cut+len(t)-1, len(s.buf))], t); i >= 0 && from+i < cut {
				cut, moved = from+i, true
			}
		}
	}
	return cut
}

// Close writes what was held back, redacted.
func (s *stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.Write(s.r.Bytes(s.buf))
	s.buf = nil
	return err
}
