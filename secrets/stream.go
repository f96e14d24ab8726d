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
// which writes them. A token shape that reaches patternMax is masked
// there and its continuation masked as it arrives (long.go). Values added to r later count from the next write.
// The writer also has a method Gap() error, for a caller that loses a
// piece of the output to say where: a credential the lost piece cuts is
// then masked on both sides (see stream.Gap).
func (r *Redactor) Stream(w io.Writer) io.WriteCloser {
	return &stream{r: r, w: w}
}

type stream struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
	gap bool // buf starts right after a gap (Gap)
	// long is set inside a token shape longer than patternMax whose
	// marker is written (long.go): 'w' after a token byte, '.' after a
	// '.' that is the shape's only if a token byte follows.
	long byte
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, head := p, []byte(nil) // with nothing held back, p is read in place, not copied
	if s.long != 0 {
		if b, head = s.skipLong(p); s.long != 0 {
			return len(p), nil
		}
	}
	if len(s.buf) > 0 {
		b = append(s.buf, b...)
	}
	if s.gap {
		n, marker, wait := s.gapStart(b, false)
		if wait && len(b) < s.gapHold() {
			s.buf = append([]byte(nil), b...)
			return len(p), nil
		}
		if wait { // held too long: masked whole, and what follows is after a gap still
			s.buf = nil
			if _, err := s.w.Write([]byte(gapMarker)); err != nil {
				return 0, err
			}
			return len(p), nil
		}
		s.gap, head, b = false, []byte(marker), b[n:]
	}
	cut := 0
	for {
		if g, dot := longShape(b); g >= 0 && s.r != nil {
			if err := s.startLong(head, b, g, dot); err != nil {
				return 0, err
			}
			return len(p), nil
		}
		cut = s.safeCut(b)
		g, e := longAcross(b, cut)
		if g < 0 || s.r == nil {
			break
		}
		head = append(append(head, s.r.Bytes(b[:s.formCut(b, g)])...), patternMarker...)
		b = b[e:]
	}
	out := b[:cut]
	if cut > 0 {
		out = s.r.Bytes(out)
	}
	s.buf = append([]byte(nil), b[cut:]...) // p is not the stream's to keep
	if len(head) > 0 {
		out = append(head, out...)
	}
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safeCut is how much of buf can be redacted and written now: all but
// the last hold bytes, less any credential that reaches into them.
func (s *stream) safeCut(buf []byte) int {
	if s.r == nil {
		return len(buf)
	}
	forms := s.r.state().forms
	hold := 0
	if len(forms) > 0 {
		hold = len(forms[0].text) - 1 // forms are longest first
	}
	return s.crossCut(buf, max(len(buf)-hold, 0))
}

// crossCut moves cut back to the start of any credential, or token
// shape, that crosses it.
func (s *stream) crossCut(buf []byte, cut int) int {
	for moved := true; moved && cut > 0; {
		moved = false
		if c := patternCut(buf, cut); c < cut {
			cut, moved = c, true
		}
		if c := s.formCut(buf, cut); c < cut {
			cut, moved = c, true
		}
	}
	return cut
}

// formCut moves cut back to the start of any credential that crosses it.
func (s *stream) formCut(buf []byte, cut int) int {
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range s.r.state().forms {
			t := []byte(f.text)
			// An occurrence that starts before cut and ends after it.
			from := max(cut-len(t)+1, 0)
			if i := bytes.Index(buf[from:min(cut+len(t)-1, len(buf))], t); i >= 0 && from+i < cut {
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
	if s.long == '.' { // the shape ended before a last '.'
		s.long = 0
		_, err := s.w.Write([]byte("."))
		return err
	}
	if len(s.buf) == 0 {
		return nil
	}
	b, out := s.buf, []byte(nil)
	if s.gap {
		n, marker, _ := s.gapStart(b, true)
		out, b = []byte(marker), b[n:]
	}
	_, err := s.w.Write(append(out, s.r.Bytes(b)...))
	s.buf = nil
	return err
}
