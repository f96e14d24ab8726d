package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// TestTwoAnswersContinueARunOnce: a person clicks "answer" twice (or two
// people answer at once). The second answer arrives while the first is
// still preparing the run's environment, before it journaled anything.
// Only one may carry the run on: two would both journal an answer with
// the same sequence numbers and run nodes on one workspace side by side.
func TestTwoAnswersContinueARunOnce(t *testing.T) {
	f := newAnswerFixture(t, answerBlueprint)
	sum := f.handedOff(t)
	firstIn, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	calls := 0
	f.rt.Prepare = func(ctx context.Context, dir string, bp *blueprint.Blueprint, resume bool) (*runtime.Environment, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			close(firstIn)
			<-release
		}
		return &runtime.Environment{Workspace: f.ws}, nil
	}
	type result struct {
		sum *runtime.Summary
		err error
	}
	first := make(chan result, 1)
	go func() {
		s, err := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "use v2", By: "ana"})
		first <- result{s, err}
	}()
	<-firstIn
	_, err2 := f.rt.Answer(context.Background(), sum.Dir, runtime.Answer{Node: "implement", Note: "use v2 too", By: "bo"})
	close(release)
	r1 := <-first
	if r1.err != nil {
		t.Fatalf("the first answer: %v", r1.err)
	}
	if err2 == nil {
		t.Error("a second answer continued the run while the first was carrying it on")
	}
	events := f.journal(t, sum.Dir)
	answers := 0
	for _, ev := range events {
		if ev.Type == runtime.EvAnswered {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("the journal records %d answers, want 1", answers)
	}
	if err := runtime.Replay(f.bp, events); err != nil {
		t.Errorf("the journal no longer replays: %v", err)
	}
}
