package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, and returns ctx's error if it ended
// first (nil when d passed).
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
