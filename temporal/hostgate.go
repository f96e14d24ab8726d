package temporal

import (
	"context"
	"sync"
)

// A host's activities for one run meet in this process when Temporal
// tries an activity again while its earlier try is still running here:
// the server gave up on the earlier try (its heartbeats did not arrive,
// e.g. while the server restarted) but this worker did not die. Both
// tries then want the run's directory, whose lock (runtime.lockRun) one
// process cannot take twice, and a node's two tries would run one attempt
// twice on one workspace. So a host lets one activity at a time open,
// reopen, rebuild or finish a run (gate), and a node's new try stops the
// earlier one and waits for its end before it goes on (claim).

// runGates serialises the activities that open or close a run's copy.
type runGates struct {
	mu    sync.Mutex
	gates map[string]*runGate
}

type runGate struct {
	c     chan struct{}
	users int
}

// enter waits for the run's gate (or ctx) and returns its release.
func (g *runGates) enter(ctx context.Context, runID string) (func(), error) {
	g.mu.Lock()
	if g.gates == nil {
		g.gates = map[string]*runGate{}
	}
	rg := g.gates[runID]
	if rg == nil {
		rg = &runGate{c: make(chan struct{}, 1)}
		g.gates[runID] = rg
	}
	rg.users++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		if rg.users--; rg.users == 0 {
			delete(g.gates, runID)
		}
		g.mu.Unlock()
	}
	select {
	case rg.c <- struct{}{}:
		return func() { <-rg.c; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// waiting is the number of activities in or waiting at the run's gate.
func (g *runGates) waiting(runID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rg := g.gates[runID]; rg != nil {
		return rg.users
	}
	return 0
}

// nodeClaims holds the node activity running each node of each run here.
type nodeClaims struct {
	mu      sync.Mutex
	running map[string]*nodeClaim
}

type nodeClaim struct {
	stop context.CancelFunc
	done chan struct{}
}

// claim stops the try of the same run's node still running here, waits
// for it to end (or ctx), and returns a context that the next try stops
// in turn, with the release to call when this try has ended.
func (n *nodeClaims) claim(ctx context.Context, runID, node string) (context.Context, func(), error) {
	key := runID + "\x00" + node
	for {
		n.mu.Lock()
		if n.running == nil {
			n.running = map[string]*nodeClaim{}
		}
		old := n.running[key]
		if old == nil {
			cctx, stop := context.WithCancel(ctx)
			mine := &nodeClaim{stop: stop, done: make(chan struct{})}
			n.running[key] = mine
			n.mu.Unlock()
			return cctx, func() {
				stop()
				n.mu.Lock()
				if n.running[key] == mine {
					delete(n.running, key)
				}
				n.mu.Unlock()
				close(mine.done)
			}, nil
		}
		n.mu.Unlock()
		old.stop()
		select {
		case <-old.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}
