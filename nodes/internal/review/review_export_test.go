package review

import (
	"context"
	"time"

	"github.com/sandgate/sandgate/internal/pause"
)

// FastReviewPolling makes waiting review nodes poll the local queue every
// 20ms and sleep at most 20ms at a time, reporting every pause they ask
// for (the GitHub backoff, a rate limit's Retry-After) to slept. It
// returns the restore function.
func FastReviewPolling(slept func(time.Duration)) (restore func()) {
	old := reviewPolling
	reviewPolling.local = 20 * time.Millisecond
	reviewPolling.sleep = func(ctx context.Context, d time.Duration) error {
		if slept != nil {
			slept(d)
		}
		return pause.For(ctx, min(d, 20*time.Millisecond))
	}
	return func() { reviewPolling = old }
}
