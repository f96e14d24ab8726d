package pause

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFor: a wait that runs out returns nil; one whose context ends
// first returns at once with the context's error, however long it was
// asked to wait.
func TestFor(t *testing.T) {
	if err := For(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("a wait that ran out: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait whose context ended: %v, want context.Canceled", err)
	}
}
