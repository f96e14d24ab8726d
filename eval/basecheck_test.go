package eval

import (
	"errors"
	"sync"
	"testing"
)

// TestBaseGradedOnce: of twins asking at once, one grades and the other
// takes its result; another key grades of its own; an error is not kept.
func TestBaseGradedOnce(t *testing.T) {
	var b baseGrades
	var mu sync.Mutex
	calls := map[string]int{}
	grade := func(key string, err error) func() (*graded, error) {
		return func() (*graded, error) {
			mu.Lock()
			calls[key]++
			mu.Unlock()
			if err != nil {
				return nil, err
			}
			return &graded{Tests: map[string]string{"TestAdd": TestFail}}, nil
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := b.get("calc", grade("calc", nil)); err != nil || out.Tests["TestAdd"] != TestFail {
				t.Errorf("%v %v", out, err)
			}
		}()
	}
	wg.Wait()
	if _, err := b.get("words", grade("words", errors.New("box"))); err == nil {
		t.Fatal("the error was lost")
	}
	if _, err := b.get("words", grade("words", nil)); err != nil {
		t.Fatal(err)
	}
	if calls["calc"] != 1 || calls["words"] != 2 {
		t.Fatalf("graded %v: want calc once, words again after its error", calls)
	}
}
