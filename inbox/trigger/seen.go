package trigger

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// seenStore remembers the delivery ids handled, one a line in a file that
// survives a restart (GitHub redelivers on request, and an attacker who
// captured a signed delivery can send it again at any time). It keeps the
// last max ids: the file is rewritten with those when it holds twice as
// many.
type seenStore struct {
	path string
	max  int

	mu    sync.Mutex
	f     *os.File
	ids   map[string]bool
	order []string
	lines int
}

func openSeen(path string, max int) (*seenStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("trigger state: %w", err)
	}
	s := &seenStore{path: path, max: max, ids: map[string]bool{}}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			s.remember(sc.Text())
			s.lines++
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("trigger state %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("trigger state: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trigger state: %w", err)
	}
	s.f = f
	return s, nil
}

// remember adds id in memory, forgetting the oldest past max.
func (s *seenStore) remember(id string) {
	if s.ids[id] {
		return
	}
	s.ids[id] = true
	s.order = append(s.order, id)
	if len(s.order) > s.max {
		delete(s.ids, s.order[0])
		s.order = s.order[1:]
	}
}

// add records id and reports whether it is new. It is on disk (synced)
// before add returns true, so a crash cannot run a delivery twice.
func (s *seenStore) add(id string) (bool, error) { return s.addAll(id) }

// addAll records ids and reports whether none of them was seen before
// (all are recorded either way, at once).
func (s *seenStore) addAll(ids ...string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fresh := true
	var lines strings.Builder
	for _, id := range ids {
		if s.ids[id] {
			fresh = false
			continue
		}
		lines.WriteString(id + "\n")
	}
	if lines.Len() == 0 {
		return false, nil
	}
	if _, err := s.f.WriteString(lines.String()); err != nil {
		return false, fmt.Errorf("trigger state: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return false, fmt.Errorf("trigger state: %w", err)
	}
	for _, id := range ids {
		if !s.ids[id] {
			s.remember(id)
			s.lines++
		}
	}
	if s.lines > 2*s.max {
		s.compact()
	}
	return fresh, nil
}

// compact rewrites the file with the ids kept; a failure leaves the
// longer file, which is still right.
func (s *seenStore) compact() {
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	w := bufio.NewWriter(f)
	for _, id := range s.order {
		w.WriteString(id + "\n")
	}
	if w.Flush() != nil || f.Sync() != nil || f.Close() != nil || os.Rename(tmp, s.path) != nil {
		f.Close()
		os.Remove(tmp)
		return
	}
	nf, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	s.f.Close()
	s.f, s.lines = nf, len(s.order)
}

func (s *seenStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.Close()
}
