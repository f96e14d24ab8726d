//go:build linux

package sandbox

import (
	"context"
	"os"
	"testing"
)

// TestPoolRefillIsDeferredToTheBuiltBox: a take leaves the next spare
// unbegun until its box is built (refill), so nothing is made beside
// the build; a take or ReleaseSpares in between must not wait forever
// for it: the take begins it and gets it, ReleaseSpares cancels it, and
// the late refill then makes nothing.
func TestPoolRefillIsDeferredToTheBuiltBox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("spare inits need the harness's cgroups (root)")
	}
	ctx := context.Background()
	key := keyOf(Limits{}.withDefaults(), true)
	ReleaseSpares()
	t.Cleanup(ReleaseSpares)

	// A take between another take and its refill gets the spare.
	if b, _ := zygotes.take(ctx, key); b != nil {
		t.Fatal("an empty pool gave a spare")
	}
	b, refill := zygotes.take(ctx, key)
	if b == nil {
		t.Fatal("a take after a take whose box was not built yet got no spare: the deferred spare was not begun for it")
	}
	_ = b.stop()
	releaseLater(b.deadNS, nil)

	// ReleaseSpares cancels the unbegun one; the refill after it makes none.
	ReleaseSpares()
	refill()
	zygotes.mu.Lock()
	next := zygotes.next
	zygotes.mu.Unlock()
	if next != nil {
		t.Fatal("a refill after ReleaseSpares made a spare")
	}

	// A refill begins the next one, which the following take gets.
	_, refill = zygotes.take(ctx, key)
	refill()
	b, refill = zygotes.take(ctx, key)
	if b == nil {
		t.Fatal("the refilled spare was not there for the next take")
	}
	refill()
	_ = b.stop()
	releaseLater(b.deadNS, nil)
}
