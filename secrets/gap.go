package secrets

import (
	"bytes"
)

// gapMin is the shortest piece of a credential that a Stream masks beside
// a gap: fewer bytes are too common to be worth mangling output for.
const gapMin = 4

// gapMarker replaces text beside a gap that may be part of a token shape
// (Patterns) whose rest the gap took.
const gapMarker = "[redacted: may be part of a credential]"

// Gap tells the stream that output is missing between what was written
// so far and what comes next (a live queue left a piece out). A
// credential that the gap cuts would otherwise be written in two parts,
// neither of them whole: so the held-back end of what came before is
// replaced by its credential's marker when it is the start of a
// credential (gapMin bytes or more) or of a token shape, and so is the
// start of what comes after when it is the end of one, or a run of token
// bytes (Patterns) that long. Without a gap the stream writes exactly
// what it would otherwise.
func (s *stream) Gap() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return nil
	}
	s.long = 0 // a long shape's last '.' is masked with it
	b, out := s.buf, []byte(nil)
	if s.gap { // what came after an earlier gap, all of it held back
		n, marker, _ := s.gapStart(b, true)
		out, b = []byte(marker), b[n:]
	}
	j, marker := s.gapEnd(b)
	out = append(append(out, s.r.Bytes(b[:j])...), marker...)
	s.buf, s.gap = nil, true
	if len(out) == 0 {
		return nil
	}
	_, err := s.w.Write(out)
	return err
}

// gapEnd is where the part of b to mask before a gap starts, and its
// marker: the longest end of b that begins a credential or a token
// shape, widened to any credential that crosses its start.
func (s *stream) gapEnd(b []byte) (int, string) {
	j, marker := len(b), ""
	for _, f := range s.r.state().forms {
		for k := min(len(f.text)-1, len(b)); k >= gapMin && len(b)-k < j; k-- {
			if bytes.HasSuffix(b, []byte(f.text[:k])) {
				j, marker = len(b)-k, f.marker
				break
			}
		}
	}
	if i := patternCut(b, len(b)); len(b)-i >= gapMin && i < j {
		j, marker = i, gapMarker
	}
	if j < len(b) {
		j = s.crossCut(b, j)
	}
	return j, marker
}

// gapStart is how much of b, which follows a gap, to mask, and its
// marker: the longest start of b that ends a credential, or a leading
// run of token bytes, widened to the end of any credential that crosses
// its end (gapWiden). wait says b may yet become one with more output
// (unless final, when a b that is the middle of a credential is masked
// whole).
func (s *stream) gapStart(b []byte, final bool) (n int, marker string, wait bool) {
	for _, f := range s.r.state().forms {
		t := []byte(f.text)
		for k := len(t) - 1; k >= gapMin && k > n; k-- {
			suf := t[len(t)-k:]
			if bytes.HasPrefix(b, suf) {
				n, marker = k, f.marker
				break
			}
			if len(b) < k && bytes.HasPrefix(suf, b) {
				if !final {
					return 0, "", true
				}
				if len(b) >= gapMin && len(b) > n {
					n, marker = len(b), f.marker
				}
			}
		}
	}
	run := 0
	for run < len(b) && tokenByte(b[run]) {
		run++
	}
	if run == len(b) && run < patternMax && !final {
		return 0, "", true
	}
	if run >= gapMin && run > n {
		n, marker = run, gapMarker
	}
	if n == 0 {
		return 0, "", false
	}
	if n, wait = s.gapWiden(b, n, final); wait {
		return 0, "", true
	}
	return n, marker, false
}

// gapHold bounds what a stream holds back after a gap while it waits to
// see what the gap cut: credentials that overlap one another back to
// back (a value whose end is its start) could otherwise keep it waiting
// for ever.
func (s *stream) gapHold() int {
	hold := patternMax
	if forms := s.r.state().forms; len(forms) > 0 {
		hold += 2 * len(forms[0].text)
	}
	return hold
}

// gapWiden moves n, the end of the mask at the start of b, on to the end
// of any credential or token shape that starts before n and ends after
// it: masking only its start would write its rest in clear. One that may
// still be completing at b's end makes it wait (unless final, when the
// mask takes the rest of b).
func (s *stream) gapWiden(b []byte, n int, final bool) (int, bool) {
	for moved := true; moved; {
		moved = false
		for _, f := range s.r.state().forms {
			t := []byte(f.text)
			for p := max(n-len(t)+1, 0); p < n; p++ {
				switch {
				case bytes.HasPrefix(b[p:], t):
					if p+len(t) > n {
						n, moved = p+len(t), true
					}
				case len(b)-p < len(t) && bytes.HasPrefix(t, b[p:]):
					if !final {
						return 0, true
					}
					n, moved = len(b), n < len(b)
				}
			}
		}
		if end, open := shapeAcross(b, n); end > n {
			if open && !final && end-n < patternMax {
				return 0, true
			}
			n, moved = end, true
		}
	}
	return n, false
}

// shapeAcross is the end of a token shape (or of "ghs_" cut short by b's
// end) that starts before n and reaches past it, and whether it reaches
// b's end; n when there is none.
func shapeAcross(b []byte, n int) (int, bool) {
	q := n
	for q > 0 && tokenByte(b[q-1]) {
		q--
	}
	i := bytes.Index(b[q:min(n+3, len(b))], []byte("ghs_"))
	if i < 0 || q+i >= n {
		for k := 1; k <= 3 && k <= len(b); k++ {
			if p := len(b) - k; p < n && bytes.HasPrefix([]byte("ghs_"), b[p:]) {
				return len(b), true
			}
		}
		return n, false
	}
	end := q + i + 4
	for end < len(b) && tokenByte(b[end]) {
		end++
	}
	return end, end == len(b)
}
