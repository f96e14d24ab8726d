package workspace

import (
	"context"
	"runtime"
	"testing"
)

// blocks reports whether acquiring would wait: with a canceled context,
// acquire takes a free lock and refuses instead of waiting.
func blocks(t *testing.T, q *quiesce, exclusive bool) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release, err := q.acquire(ctx, exclusive)
	if err != nil {
		return true
	}
	release()
	return false
}

func TestQuiesce(t *testing.T) {
	var q quiesce
	bg := context.Background()
	w1, _ := q.acquire(bg, false)
	if blocks(t, &q, false) {
		t.Fatal("writers must share the box")
	}
	if !blocks(t, &q, true) {
		t.Fatal("a gate must wait for a running writer")
	}
	got := make(chan func())
	go func() {
		release, _ := q.acquire(bg, true)
		got <- release
	}()
	// Wait until the gate is queued, then a new writer must wait behind it.
	for {
		q.mu.Lock()
		n := q.gatesWaiting
		q.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	if !blocks(t, &q, false) {
		t.Fatal("a waiting gate must hold back new writers")
	}
	w1()
	g := <-got
	if !blocks(t, &q, false) || !blocks(t, &q, true) {
		t.Fatal("a gate must hold the box alone")
	}
	g()
	if blocks(t, &q, false) || blocks(t, &q, true) {
		t.Fatal("the box stays held after release")
	}
}
