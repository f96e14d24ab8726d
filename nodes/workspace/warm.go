package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Warm builds. Every box (the agent's, each gate's judge box, CI's clean
// box) sees the user's Go build cache copy-on-write, and throws away what
// it compiled: without more, each of them compiles again whatever the
// host has not built, on every run. So the harness keeps one more build
// cache, beneath the user's in every box, that only it writes: once per
// base commit, before the run's box starts, a warm box
// runs `go build` and `go vet` on the run's packages — which compile them
// and their dependencies, test-only ones included, and cache vet's
// findings — and the harness
// copies the entries that box wrote into the repository's warm cache.
//
// Why this cache can be trusted by the judge box: the warm box runs the
// Go toolchain alone on the base commit; no code from the repository
// runs there (vet runs no test binary, builds no cgo program it then
// executes, and go:generate is never run), and no agent command ever
// runs in it. Every other box sees the warm cache as a read-only lower
// layer, so what the agent's commands or a test binary write to their
// GOCACHE lands in their own layer and is thrown away. The copy takes
// only Go cache entries: outputs whose name is the SHA-256 of their
// content, and index entries in Go's format naming such an output.

// WarmMaxBytes is the default size at which the warm cache is emptied
// and refilled from the next run on (Options.WarmMaxBytes).
const WarmMaxBytes = 4 << 30

// warmVetTimeout bounds the warm step's go build and go vet together
// (Limits.Timeout overrides it): a run never waits longer than this for
// its cache, and what was compiled by then is kept.
const warmVetTimeout = 10 * time.Minute

// goBuildCache is where GoCaches mounts the build cache in a box.
const goBuildCache = sandbox.HomeDir + "/.cache/go-build"

// warmDir is the warm cache's directory under the harness's cache: the
// cache proper (go-build), a marker per commit warmed and a lock per
// commit being warmed, and its size. One cache serves every repository,
// as the user's own build cache does: Go names an entry by the hash of
// everything that went into it, so what one repository's warm box
// compiled is right for any other that compiles the same, and the
// standard library and shared dependencies are compiled once.
func warmDir(cacheDir string) string { return filepath.Join(cacheDir, "gowarm") }

// warmCaches returns caches with the repository's warm build cache
// beneath the user's build cache, after warming it for the commit when
// it is not yet. It returns caches as given when there is nothing to
// warm (no build cache, not a Go repository, warm builds off, a box
// without isolation) or the warm step cannot run; a run never fails for
// want of a warm cache.
func (w *Workspace) warmCaches(ctx context.Context, o Options, bp *blueprint.Blueprint, caches []sandbox.Cache) []sandbox.Cache {
	i := buildCacheIndex(caches)
	// With an image the toolchain is the image's: a warm box on the
	// host's root would fill the cache for another toolchain.
	if i < 0 || o.ColdBuilds || bp.Sandbox.Isolation == "none" || bp.Sandbox.Image != "" || !isGoRepo(w.Snapshot) {
		return caches
	}
	dir := warmDir(w.cacheDir)
	cache, err := w.warm(ctx, o, bp, caches, dir)
	if err != nil {
		runtime.Notef(ctx, "warm build skipped: %v", err)
	}
	if cache == "" {
		return caches
	}
	out := append([]sandbox.Cache(nil), caches...)
	out[i].Lower = append([]string{cache}, out[i].Lower...)
	return out
}

// buildCacheIndex is the index of the Go build cache among caches, or -1.
func buildCacheIndex(caches []sandbox.Cache) int {
	for i, c := range caches {
		if c.Env == "GOCACHE" && c.Box == goBuildCache {
			return i
		}
	}
	return -1
}

// isGoRepo reports whether the snapshot's root holds a go.mod or go.work.
func isGoRepo(snap string) bool {
	for _, f := range []string{"go.mod", "go.work"} {
		if st, err := os.Lstat(filepath.Join(snap, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// warm makes sure the warm cache under dir holds the base commit's build
// and returns the cache directory ("" when there is none to use). Runs on
// the same commit warm it once: the others wait for the one warming.
func (w *Workspace) warm(ctx context.Context, o Options, bp *blueprint.Blueprint, caches []sandbox.Cache, dir string) (string, error) {
	cache, marker := filepath.Join(dir, "go-build"), filepath.Join(dir, "warmed", w.Base)
	if err := os.MkdirAll(filepath.Join(dir, "warmed"), 0o755); err != nil {
		return "", err
	}
	if done, err := tried(marker, cache); done {
		return existing(cache), err
	}
	unlock, err := lockFile(ctx, marker+".lock")
	if err != nil {
		return existing(cache), err
	}
	defer unlock()
	if done, err := tried(marker, cache); done {
		return existing(cache), err // warmed, or failed, while this run waited
	}
	if err := resetIfFull(ctx, dir, cache, o.WarmMaxBytes); err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	pkgs := warmPackages(bp, runtime.RunInputs(ctx))
	runtime.Notef(ctx, "warming the build cache for %.12s: go build and go vet %s in a box of its own (once per commit; no code from the repository runs)", w.Base, strings.Join(pkgs, " "))
	start := time.Now()
	n, bytes, err := w.warmBox(ctx, o, bp, caches, cache, pkgs)
	if err != nil && ctx.Err() == nil {
		// A commit whose build fails or never ends (a cgo header that
		// includes itself twice runs the preprocessor for ever) fails the
		// same way each time: remember it, or every run on the commit
		// waits out the warm step again before its box starts. What it
		// compiled is kept; the next commit's warm step goes on from there.
		_ = os.WriteFile(marker+failedSuffix, []byte(err.Error()+"\n"), 0o644)
	}
	if err != nil && !errors.Is(err, errWarmPartial) {
		return existing(cache), err
	}
	if serr := addSize(ctx, dir, bytes); serr != nil {
		return cache, serr
	}
	if err != nil {
		runtime.Notef(ctx, "%v after %s; its %d entries (%d KiB) are kept, this commit is not warmed again, and the next commit's warm step goes on from there", err, time.Since(start).Round(time.Millisecond), n, bytes>>10)
		return cache, nil
	}
	runtime.Notef(ctx, "build cache warmed: %d entries, %d KiB in %s", n, bytes>>10, time.Since(start).Round(time.Millisecond))
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return cache, err
	}
	return cache, os.Remove(marker + ".lock")
}

// failedSuffix marks a commit whose warm step failed; no later run
// tries it again (until the warm cache is reset).
const failedSuffix = ".failed"

// tried reports whether the commit of marker has been warmed, or its warm
// step failed (then err says why, and no run tries again).
func tried(marker, cache string) (bool, error) {
	if _, err := os.Stat(marker); err == nil {
		return true, nil
	}
	if b, err := os.ReadFile(marker + failedSuffix); err == nil {
		return true, fmt.Errorf("this commit's warm step failed before, and is not tried again: %s", strings.TrimSpace(string(b)))
	}
	return false, nil
}

// lockFile takes an exclusive lock on path, waiting until ctx ends; a
// crashed holder's lock goes with its process.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		busy, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if !busy {
			return func() { f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// existing is cache when it exists (a run that could not warm it still
// uses what earlier runs left), else "".
func existing(cache string) string {
	if st, err := os.Stat(cache); err == nil && st.IsDir() {
		return cache
	}
	return ""
}

// warmPackages are the packages the warm step vets: the run's `packages`
// input, the name the shipped blueprints give the packages their gates
// check, split into arguments; else every package of the repository.
func warmPackages(bp *blueprint.Blueprint, inputs map[string]any) []string {
	v, ok := inputs["packages"]
	if in := bp.Inputs["packages"]; !ok && in != nil && in.Default != nil {
		v, ok = in.Default, true
	}
	if s, isStr := v.(string); ok && isStr {
		var out []string
		for _, f := range strings.Fields(s) {
			if !strings.HasPrefix(f, "-") { // a package, never a flag
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return []string{"./..."}
}

// warmBox runs go vet on pkgs in a box of its own over the run's
// snapshot, with cache beneath the user's build cache, and copies the
// entries it compiled into cache.
func (w *Workspace) warmBox(ctx context.Context, o Options, bp *blueprint.Blueprint, caches []sandbox.Cache, cache string, pkgs []string) (n int, bytes int64, err error) {
	state, err := os.MkdirTemp("", "sg-warm-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(state)
	policy := SandboxPolicy(bp.Sandbox)
	if policy.Env, err = warmEnv(policy.Env, os.LookupEnv); err != nil {
		return 0, 0, err
	}
	policy.Network, policy.AllowHosts = sandbox.NetworkNone, nil
	policy.Limits, policy.ReadOnly = o.Limits, o.ReadOnly
	policy.Caches = append([]sandbox.Cache(nil), caches...)
	i := buildCacheIndex(policy.Caches)
	policy.Caches[i].Lower = append([]string{cache}, policy.Caches[i].Lower...)
	box, err := sandbox.Start(ctx, sandbox.Options{Policy: policy, Snapshot: w.Snapshot, StateDir: filepath.Join(state, "box")})
	if err != nil {
		return 0, 0, fmt.Errorf("start the warm box: %w", err)
	}
	defer box.Discard()
	defer box.Close()
	budget := warmVetTimeout
	if o.Limits.Timeout > 0 {
		budget = o.Limits.Timeout
	}
	partial := warmCommands(ctx, box, pkgs, time.Now().Add(budget))
	up := box.CacheUpper(goBuildCache)
	if up == "" {
		return 0, 0, errors.New("the warm box has no build cache layer to copy")
	}
	lowers := append([]string{cache, policy.Caches[i].Host}, policy.Caches[i].Lower[1:]...)
	n, bytes, err = harvest(up, cache, lowers)
	if err == nil {
		err = partial
	}
	return n, bytes, err
}

// errWarmPartial says the warm step stopped before it compiled everything;
// what it compiled is kept, and the commit is not marked warmed, so the
// next run on it goes on from there.
var errWarmPartial = errors.New("the warm build stopped before it compiled everything")

// warmCommands runs go build, then go vet, on pkgs until deadline. go
// build compiles the packages; go vet their test-only imports too, and
// caches its own findings. A vet finding or a package that does not build
// still leaves every package that compiled in the cache: the exit status
// is not ours to judge here. It returns errWarmPartial (wrapped) when the
// commands did not finish.
func warmCommands(ctx context.Context, box *sandbox.Box, pkgs []string, deadline time.Time) error {
	for _, verb := range []string{"build", "vet"} {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w: no time was left for go %s", errWarmPartial, verb)
		}
		res, err := box.Exec(ctx, sandbox.Command{Args: append([]string{"go", verb}, pkgs...), Timeout: left})
		if err != nil {
			return fmt.Errorf("%w: go %s: %v", errWarmPartial, verb, err)
		}
		if res.TimedOut {
			return fmt.Errorf("%w: go %s ran out of time", errWarmPartial, verb)
		}
	}
	return nil
}

// resetIfFull empties the warm cache when it has grown past max bytes
// (WarmMaxBytes when max is 0): the next warm steps refill it with what
// runs use now. Boxes that still show the old entries keep the files they
// opened; one that looks up a removed entry builds it.
func resetIfFull(ctx context.Context, dir, cache string, max int64) error {
	if max <= 0 {
		max = WarmMaxBytes
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "size.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if warmSize(dir) <= max {
		return nil
	}
	trash := filepath.Join(dir, "trash-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.Rename(cache, trash); err != nil && !os.IsNotExist(err) {
		return err
	}
	// Markers go with the entries; a marker being written now fails and
	// its run goes on with what is left.
	markers, _ := filepath.Glob(filepath.Join(dir, "warmed", "*"))
	for _, m := range markers {
		if !strings.HasSuffix(m, ".lock") {
			os.Remove(m)
		}
	}
	if err := os.Remove(filepath.Join(dir, "size")); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.RemoveAll(trash)
}

// warmSize is the bytes the warm cache holds, as its size file counts.
func warmSize(dir string) int64 {
	b, _ := os.ReadFile(filepath.Join(dir, "size"))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// addSize adds bytes to the warm cache's size file.
func addSize(ctx context.Context, dir string, bytes int64) error {
	unlock, err := lockFile(ctx, filepath.Join(dir, "size.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	return os.WriteFile(filepath.Join(dir, "size"), []byte(strconv.FormatInt(warmSize(dir)+bytes, 10)+"\n"), 0o644)
}
