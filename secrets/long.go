package secrets

// A token shape longer than patternMax is more than a Stream holds back
// for it: once the shape it holds reaches patternMax, the stream writes
// the marker and masks the shape's continuation, byte by byte, as it
// arrives (stream.long), so the shape is masked whole as by Bytes with
// no more than patternMax bytes held.

// longShape is the start of a token shape in b that reaches b's end (or
// all of b but a last '.', which the next byte may yet make part of it)
// and is patternMax bytes long or more, and whether it stops before such
// a '.'; -1 when there is none.
func longShape(b []byte) (int, bool) {
	n := len(b)
	if tokenRun(b, n-1) < patternMax {
		return -1, false
	}
	if start, end := shapeOver(b, n-1); end == n && end-start >= patternMax {
		return start, false
	}
	if b[n-1] == '.' {
		if start, end := shapeOver(b, n-2); end == n-1 && end-start >= patternMax {
			return start, true
		}
	}
	return -1, false
}

// longAcross is the token shape patternMax bytes long or more that
// crosses cut, if any (start -1 if not): patternCut looks no further
// back than patternMax for the start of one.
func longAcross(b []byte, cut int) (start, end int) {
	if cut <= 0 || cut >= len(b) || tokenRun(b, cut) < patternMax {
		return -1, -1
	}
	if start, end = shapeOver(b, cut); start < 0 || start >= cut || end-start < patternMax {
		return -1, -1
	}
	return start, end
}

// tokenRun is the length of the run of token bytes in b that holds pos
// (0 if b[pos] is no token byte).
func tokenRun(b []byte, pos int) int {
	if pos < 0 || pos >= len(b) || !tokenByte(b[pos]) {
		return 0
	}
	i, j := pos, pos+1
	for i > 0 && tokenByte(b[i-1]) {
		i--
	}
	for j < len(b) && tokenByte(b[j]) {
		j++
	}
	return j - i
}

// shapeOver is the token shape (as the whole text is searched for them)
// that holds b[pos], or -1, -1.
func shapeOver(b []byte, pos int) (start, end int) {
	q := pos
	for q > 0 && tokenByte(b[q-1]) {
		q--
	}
	for from := q; from <= pos; {
		loc := installationTokenRE.FindIndex(b[from:])
		if loc == nil || from+loc[0] > pos {
			break
		}
		if from+loc[1] > pos {
			return from + loc[0], from + loc[1]
		}
		from += loc[1]
	}
	return -1, -1
}

// skipLong masks the start of b that continues the long shape the stream
// is in: token bytes, and a '.' when a token byte other than '.' follows
// it. It returns the rest of b, after the shape, and what to write before
// it: a '.' the shape turned out not to take.
func (s *stream) skipLong(b []byte) (rest, head []byte) {
	for i, c := range b {
		switch {
		case c != '.' && tokenByte(c):
			s.long = 'w'
		case c == '.' && s.long == 'w':
			s.long = '.'
		default:
			dot := s.long == '.'
			s.long = 0
			if dot {
				return b[i:], []byte(".")
			}
			return b[i:], nil
		}
	}
	return nil, nil
}

// startLong writes b up to the long shape at g (less any credential that
// crosses g), then the shape's marker, and masks the shape from there on.
func (s *stream) startLong(head, b []byte, g int, dot bool) error {
	j := s.formCut(b, g)
	out := append(append(head, s.r.Bytes(b[:j])...), patternMarker...)
	s.buf, s.long = nil, 'w'
	if dot {
		s.long = '.'
	}
	_, err := s.w.Write(out)
	return err
}
