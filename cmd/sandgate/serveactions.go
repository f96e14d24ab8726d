package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// serveActions carry out the inbox's answers and decisions. A decision is
// made in this process, through the same review queue the CLI uses; an
// answer runs `sandgate answer` as a child process, because a run needs
// the CLI's whole sandbox set-up and should outlive the request (and the
// server) that started it.
type serveActions struct {
	exe string
	// answerArgs are the operator's flags for answered runs (--model,
	// --allow-endpoint, …), given to every `sandgate answer`.
	answerArgs []string
	// allow are the operator's --allow-endpoint prefixes for approvals.
	allow []string
	// blueprints are those Start may run (blueprintSet); nil: the
	// shipped ones.
	blueprints fs.FS
	// accepted is how long Answer waits for the child to journal the
	// answer before it lets the page show the run (default 30s).
	accepted time.Duration
	// hideEnv are variables the children do not get: the trigger file's
	// webhook and signing secrets, which only the server checks (a run
	// holding them could forge the deliveries that start runs).
	hideEnv []string

	mu       sync.Mutex
	busy     map[string]bool
	children sync.WaitGroup
}

// Decide approves or rejects through nodes.ReviewQueue. Once started a
// decision is carried through even when the browser leaves: a merge
// pushed without its recorded approval would be worse than a slow page.
func (a *serveActions) Decide(ctx context.Context, queueDir, id string, approve bool, note, by string) error {
	q := &nodes.ReviewQueue{Dir: queueDir, AllowEndpoints: a.allow}
	decide, verb := q.Reject, "reject"
	if approve {
		decide, verb = q.Approve, "approve"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	e, err := decide(ctx, id, note, by)
	switch {
	case err == nil:
		return nil
	case e != nil: // rejected, but a pushed branch could not be deleted
		return fmt.Errorf("%s is %s, but: %w", id, e.Status, err)
	}
	return fmt.Errorf("%s %s: %w", verb, id, err)
}

// Answer starts `sandgate answer DIR --to NODE --note NOTE --by BY` and
// waits until the child has journaled the answer (the run is then going
// on, and its page shows it live) or has failed (its error is the
// answer's). The child's output goes to answer-<n>.log in the run
// directory; it runs in its own process group, so neither a browser that
// leaves nor a ^C to the server stops it, and a goroutine reaps it.
func (a *serveActions) Answer(ctx context.Context, runDir, node, note, by string) error {
	// A run that is not handed off is refused before anything is
	// written (no answer log, no child).
	if err := runtime.Answerable(runDir); err != nil {
		return err
	}
	// Every value is a flag's value or follows "--": a note, a node or a
	// directory that looks like a flag is never read as one.
	args := append([]string{"answer", "--to", node, "--note", note, "--by", by}, a.answerArgs...)
	return a.carryOn(ctx, runDir, append(args, "--", runDir), "answered")
}

// carryOn runs `sandgate ARGS` on a recorded run (answer, resume) as a
// child with its output in the run's next answer-<n>.log, and waits until
// the child has journaled an event of type event (the run is going on,
// its page shows it live) or has failed (its error is the call's).
func (a *serveActions) carryOn(ctx context.Context, runDir string, args []string, event string) error {
	if !a.claim(runDir) {
		return fmt.Errorf("an answer to or a resume of %s is already under way", filepath.Base(runDir))
	}
	offset := fileSize(filepath.Join(runDir, "events.jsonl"))
	logf, logPath, err := newAnswerLog(runDir)
	if err != nil {
		a.release(runDir)
		return err
	}
	done, err := a.spawn(args, logf, func() { a.release(runDir) })
	logf.Close() // the child has its own descriptor
	if err != nil {
		return fmt.Errorf("start sandgate %s: %w", args[0], err)
	}
	return a.awaitChild(ctx, func() bool { return journaledSince(runDir, offset, `"type":"`+event+`"`) }, done, func(err error) error {
		if err == nil {
			err = fmt.Errorf("exited before the journal said %s", event)
		}
		return fmt.Errorf("sandgate %s: %w: %s (log: %s)", args[0], err, tail(logPath, 2<<10), logPath)
	})
}

// spawn starts this binary with args, its output in logf, in its own
// process group (a ^C to the server or a client that leaves does not stop
// it), and reaps it in a goroutine: done gets its exit after exited ran.
// When it cannot start, exited runs before spawn returns.
func (a *serveActions) spawn(args []string, logf *os.File, exited func()) (<-chan error, error) {
	cmd := exec.Command(a.exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if len(a.hideEnv) > 0 {
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			return slices.Contains(a.hideEnv, k)
		})
	}
	cmd.SysProcAttr = ownGroup()
	if err := cmd.Start(); err != nil {
		exited()
		return nil, err
	}
	done := make(chan error, 1)
	a.children.Add(1)
	go func() {
		defer a.children.Done()
		err := cmd.Wait()
		exited()
		done <- err
	}()
	return done, nil
}

// awaitChild polls ready until it holds (nil), the child ends first
// (failed makes the error of its exit), the accepted time passes (nil: it
// is still setting up, and goes on) or ctx ends (the child goes on).
func (a *serveActions) awaitChild(ctx context.Context, ready func() bool, done <-chan error, failed func(error) error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(cmp.Or(a.accepted, 30*time.Second))
	for {
		if ready() {
			return nil
		}
		select {
		case err := <-done:
			if ready() { // got there, then ended (succeeded, or handed off again)
				return nil
			}
			return failed(err)
		case <-deadline:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (a *serveActions) claim(dir string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.busy[dir] {
		return false
	}
	if a.busy == nil {
		a.busy = map[string]bool{}
	}
	a.busy[dir] = true
	return true
}

func (a *serveActions) release(dir string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.busy, dir)
}

// wait waits for every answer child to end (tests).
func (a *serveActions) wait() { a.children.Wait() }

// newAnswerLog creates the next free answer-<n>.log of a run.
func newAnswerLog(runDir string) (*os.File, string, error) {
	for n := 1; n < 1000; n++ {
		p := filepath.Join(runDir, "answer-"+strconv.Itoa(n)+".log")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, p, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", fmt.Errorf("answer log: %w", err)
		}
	}
	return nil, "", fmt.Errorf("answer log: %s has 999 answer-<n>.log files already", runDir)
}

// journaledSince reports whether the journal has an event of the given
// `"type":"…"` after offset.
func journaledSince(runDir string, offset int64, event string) bool {
	f, err := os.Open(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, 64<<20))
	return bytes.Contains(b, []byte(event))
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// tail is the end of a log, on one line.
func tail(p string, n int64) string {
	b, _ := os.ReadFile(p)
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
	}
	return strings.Join(strings.Fields(string(b)), " ")
}
