// Package wait lets tests wait for something to happen without a
// deadline of their own: a loaded machine is slow, not wrong, so the only
// bound is the test binary's -timeout (less a margin, so the failure
// names what never happened instead of ending in a goroutine dump). It
// imports nothing of sandgate.
package wait

import (
	"testing"
	"time"
)

// Every is how often Until looks again.
const Every = 20 * time.Millisecond

// Until calls cond until it holds. When the test's deadline (go test
// -timeout) is near and it still does not, the test fails, naming what.
func Until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !For(t, cond) {
		t.Fatalf("never happened before the test's deadline: %s", what)
	}
}

// For calls cond until it holds and reports true, or reports false when
// the test's deadline is near first.
func For(t *testing.T, cond func() bool) bool {
	t.Helper()
	end, bounded := t.Deadline()
	if bounded {
		// Keep a tenth of what is left, at most a minute, to report.
		end = end.Add(-min(time.Minute, time.Until(end)/10))
	}
	for !cond() {
		if bounded && time.Now().After(end) {
			return false
		}
		time.Sleep(Every)
	}
	return true
}
