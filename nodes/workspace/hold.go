package workspace

import (
	"context"
	"sync"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// A gate's verdict must describe what the workspace held while the gate
// ran. Nodes run in parallel in one box, so without coordination a sibling
// could swap the fix in while `go test` runs and swap the bug back after.
//
// The choice here is a workspace lock, not the cgroup freezer:
//   - every command that is not part of a gate or a promotion (agent tools,
//     shell and apply_patch nodes) holds the box shared, for the length of
//     that one command; each command is PID 1 of its own PID namespace, so
//     nothing it starts outlives it and the lock covers all it can write;
//   - a gate or promotion node holds the box exclusively for its whole run,
//     so nothing else changes the workspace while it judges or commits.
//
// Freezing would stop writers mid-write (a gate could judge a half-written
// file) while their timeouts keep running, and needs the sandbox to put gate
// commands in a cgroup of their own. Gates also exclude each other: a test
// gate runs agent-written code, which could rewrite files while a sibling
// gate runs and restore them before either looks again. The cost is that
// gates in a parallel section run one after another, and an agent's next
// command waits for a running gate (see BenchmarkParallelGates).
type quiesce struct {
	mu           sync.Mutex
	writers      int  // commands running outside gates
	exclusive    bool // a gate or promotion holds the box
	gatesWaiting int
	changed      chan struct{} // closed and replaced whenever the state eases
}

// acquire takes the box shared (exclusive=false) or exclusively. A waiting
// gate holds back new shared holders, so a busy agent cannot starve it.
func (q *quiesce) acquire(ctx context.Context, exclusive bool) (release func(), err error) {
	q.mu.Lock()
	if exclusive {
		q.gatesWaiting++
	}
	for {
		free := !q.exclusive && q.gatesWaiting == 0
		if exclusive {
			free = !q.exclusive && q.writers == 0
		}
		if free {
			if exclusive {
				q.gatesWaiting--
				q.exclusive = true
			} else {
				q.writers++
			}
			q.mu.Unlock()
			return func() { q.release(exclusive) }, nil
		}
		ch := q.wait()
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			q.mu.Lock()
			if exclusive {
				q.gatesWaiting--
				q.wake()
			}
			q.mu.Unlock()
			return nil, ctx.Err()
		}
		q.mu.Lock()
	}
}

func (q *quiesce) release(exclusive bool) {
	q.mu.Lock()
	if exclusive {
		q.exclusive = false
	} else {
		q.writers--
	}
	q.wake()
	q.mu.Unlock()
}

// wait returns the channel closed at the next state change; q.mu is held.
func (q *quiesce) wait() chan struct{} {
	if q.changed == nil {
		q.changed = make(chan struct{})
	}
	return q.changed
}

// wake tells every waiter to look again; q.mu is held.
func (q *quiesce) wake() {
	if q.changed != nil {
		close(q.changed)
		q.changed = nil
	}
}

type ctxKey int

const (
	keyQuiet ctxKey = iota // the caller holds the box exclusively
	keyBox                 // commands go to this Runner instead of the run's box
	keyHeld                // the caller holds the box shared (Hold)
)

// Quiet takes the box exclusively until release, for a gate or a
// promotion node: no other command runs in the workspace while it judges
// or commits. Commands run under the returned context do not take the
// lock again, and a context that holds the box exclusively already (a
// wrapped gate inside another) comes back as it is: a node never waits
// for itself.
func (w *Workspace) Quiet(ctx context.Context) (context.Context, func(), error) {
	if ctx.Value(keyQuiet) != nil {
		return ctx, func() {}, nil
	}
	release, err := w.quiet.acquire(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	return context.WithValue(ctx, keyQuiet, true), release, nil
}

// Runner runs commands somewhere other than the run's box: a gate's
// judge box, built from the tree the gate judges (*sandbox.Box is one).
type Runner interface {
	Exec(ctx context.Context, c sandbox.Command) (*sandbox.Result, error)
}

// WithRunner sends the commands run under the returned context to r
// instead of the run's box: every gate's commands go to its judge box
// this way, built-in or registered by an embedder, through Command and
// Exec alike.
func WithRunner(ctx context.Context, r Runner) context.Context {
	return context.WithValue(ctx, keyBox, r)
}

// WithBox sends the commands run under the returned context to box
// instead of the run's (see WithRunner).
func WithBox(ctx context.Context, box *sandbox.Box) context.Context {
	return WithRunner(ctx, box)
}

// InRunBox sends the commands run under the returned context to the
// run's box again, for a gate that acts on the workspace as the harness
// (protect's revert) rather than judging it.
func InRunBox(ctx context.Context) context.Context {
	return context.WithValue(ctx, keyBox, Runner(nil))
}

// Exec runs a shell command line in the box (see Command).
func (w *Workspace) Exec(ctx context.Context, script string, timeout time.Duration) (*sandbox.Result, error) {
	return w.Command(ctx, sandbox.Command{Args: []string{"sh", "-c", script}, Timeout: timeout})
}

// Command runs a command in the run's box, or where ctx redirects it (a
// gate's judge box, see WithRunner). Outside a gate it holds the box
// shared for the command's length, so it waits while a gate judges the
// workspace.
func (w *Workspace) Command(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	if r, ok := ctx.Value(keyBox).(Runner); ok && r != nil {
		return r.Exec(ctx, c)
	}
	if ctx.Value(keyQuiet) == nil && ctx.Value(keyHeld) == nil {
		release, err := w.quiet.acquire(ctx, false)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return w.Box.Exec(ctx, c)
}

// Executor is what agent nodes run their tools through (the agent
// package's Executor and Starter).
type Executor struct{ w *Workspace }

// Executor is the run's box for agent nodes.
func (w *Workspace) Executor() Executor { return Executor{w} }

// Exec runs one command (see Workspace.Command).
func (e Executor) Exec(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	return e.w.Command(ctx, c)
}

// Hold takes the box shared until release, for an agent session with a
// server in the box: the server may write at any time, so a gate waits for
// the session to end. Commands run under the returned context do not take
// the lock again (which, with a gate waiting, would wait forever).
func (e Executor) Hold(ctx context.Context) (context.Context, func(), error) {
	if ctx.Value(keyQuiet) != nil || ctx.Value(keyHeld) != nil {
		return ctx, func() {}, nil
	}
	release, err := e.w.quiet.acquire(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	return context.WithValue(ctx, keyHeld, true), release, nil
}

// Start runs a long-lived command (an MCP server) in the run's box. The
// caller holds the box (Hold); without that the command holds it shared
// for its life.
func (e Executor) Start(ctx context.Context, c sandbox.Command) (*sandbox.Process, error) {
	if ctx.Value(keyQuiet) != nil || ctx.Value(keyHeld) != nil {
		return e.w.Box.Start(ctx, c)
	}
	release, err := e.w.quiet.acquire(ctx, false)
	if err != nil {
		return nil, err
	}
	p, err := e.w.Box.Start(ctx, c)
	if err != nil {
		release()
		return nil, err
	}
	go func() { <-p.Done(); release() }()
	return p, nil
}
