package temporal

import (
	"testing"
	"time"

	"github.com/sandgate/sandgate/temporal/internal/testnodes"
)

// TestNodeRetryInterval: a run started since versionQuickRetry sends a
// node activity's second try quickRetryInterval after the first failed;
// an older run keeps the server's default (no interval set: 1 s), so its
// commands on replay are the ones its history holds.
func TestNodeRetryInterval(t *testing.T) {
	bp, err := testnodes.Registry().Parse("bp.yaml", []byte(loopBP("[pass]")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		quick bool
		want  time.Duration
	}{{false, 0}, {true, quickRetryInterval}} {
		r := &run{bp: bp, quickRetry: tc.quick, in: RunInput{HostTimeout: 3 * time.Second, HeartbeatTimeout: 2 * time.Second}}
		opts := r.nodeOptions("work")
		if got := opts.RetryPolicy.InitialInterval; got != tc.want {
			t.Errorf("quickRetry %v: initial interval %s, want %s", tc.quick, got, tc.want)
		}
		if opts.RetryPolicy.MaximumAttempts != 2 || opts.ScheduleToStartTimeout != 3*time.Second {
			t.Errorf("quickRetry %v: retry policy %+v, schedule-to-start %s: want 2 attempts and the host timeout", tc.quick, opts.RetryPolicy, opts.ScheduleToStartTimeout)
		}
	}
}
