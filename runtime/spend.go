package runtime

import "sync"

// Spend is an attempt's handle on what the run has spent so far, live:
// nodes running side by side see each other's spending as it happens,
// not only once the other node has finished and its cost is journaled.
// It is advisory, for a node's own checks before it spends (an agent
// before each model call); the scheduler's budget decisions use the
// journaled costs only, so replay stays exact.
type Spend struct {
	m     *meter
	added float64
}

// meter is a run execution's running total: the journaled cost when the
// execution began plus everything its attempts have spent since.
type meter struct {
	mu    sync.Mutex
	total float64
}

// Add counts money the attempt has just spent.
func (s *Spend) Add(usd float64) {
	if s == nil || usd <= 0 {
		return
	}
	s.m.mu.Lock()
	s.m.total += usd
	s.added += usd
	s.m.mu.Unlock()
}

// Total is what the run has spent, this attempt's and running siblings'
// spending included.
func (s *Spend) Total() float64 {
	if s == nil {
		return 0
	}
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.m.total
}

// settle counts what the attempt reported spending and did not Add as it
// went (a node that never uses Spend).
func (s *Spend) settle(reported float64) {
	if s == nil {
		return
	}
	s.m.mu.Lock()
	if extra := reported - s.added; extra > 0 {
		s.m.total += extra
		s.added = reported
	}
	s.m.mu.Unlock()
}
