package secrets

import (
	"bytes"
	"io"
	"sync"
)

// Stream wraps w for output that arrives in pieces cut anywhere (a
// running command's output): a credential split across two writes is
// still redacted whole. It holds back the last bytes that could begin a
// credential (fewer than the longest form's length, or a token shape that
// reaches the end) until more output shows they do not, or until Close,
// which writes them. Values added to r later count from the next write.
func (r *Redactor) Stream(w io.Writer) io.WriteCloser {
	return &stream{r: r, w: w}
}

type stream struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
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
	if s.r == nil {
		return len(s.buf)
	}
	forms := s.r.state().forms
	hold := 0
	if len(forms) > 0 {
		hold = len(forms[0].text) - 1 // forms are longest first
	}
	cut := max(len(s.buf)-hold, 0)
	for moved := true; moved && cut > 0; {
		moved = false
		if c := patternCut(s.buf, cut); c < cut {
			cut, moved = c, true
		}
		for _, f := range forms {
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
