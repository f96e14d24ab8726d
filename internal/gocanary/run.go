package gocanary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// Exec runs one command in the box.
type Exec func(ctx context.Context, c sandbox.Command) (*sandbox.Result, error)

// ExecPath is the collector's path in the box. Every go test the plan
// runs gets -count=1 before the command's own flags (a -count of its own
// still wins, and any -count turns the cache off): go test's result
// cache is keyed by the -exec path, not what is there, and the change's
// code in a sealed binary of the second phase could put its own program
// at that path and run go test through it, caching a pass for a package
// the change cannot reach that the plain run, or the next round, then
// printed as (cached) (TestAttackPoisonedResultCache).
const ExecPath = "/tmp/.sandgate-go-exec"

// failedInternally is the exit code of the harness's own scripts when a
// step of theirs (not the tests) failed.
const failedInternally = 97

// ErrNotGoTest is returned for a command Run cannot wrap.
var ErrNotGoTest = errors.New("not one plain go test command")

// Run runs a go test -json command, args as the box takes them (an argv
// starting go test, or sh -c with such a line), in two phases: the first
// builds every test binary with the canaries and runs none; once the
// canary sources and hidden files are gone, the second runs the binaries
// that hold the change's code. The result's output is the report with
// the first phase's account of the stashed packages replaced by the
// second's. When the box's disk runs low, the packages not yet stashed go
// to another round (see args.go). The packages the change cannot reach
// run last, once no secret is left in the box and no code of the change
// runs beside them: in the second phase, a sealed binary could rewrite
// their unsealed reports (TestAttackNeighbourRewritesUnreachedReport).
// The first phase keeps their binaries, with a digest of each, and a
// command of their own runs those that did not change since (see last);
// those it could not keep (the disk ran low) go to a plain go test (see
// plain). Every phase is a box command of its own, and the box kills
// whatever a command leaves running when it ends.
func (p *Plan) Run(ctx context.Context, exec Exec, args []string, timeout time.Duration, outputBytes int) (*sandbox.Result, error) {
	start := time.Now()
	p.sel = selectionOf(args)
	left := func() time.Duration {
		if timeout <= 0 {
			return 0 // the box's own limit, for each phase
		}
		return max(timeout-time.Since(start), time.Second)
	}
	var out *sandbox.Result
	var later []string
	var keep []stash
	cur := args
	for {
		res, deferred, unreached, kept, err := p.round(ctx, exec, cur, left(), outputBytes)
		if err != nil {
			return nil, err
		}
		out = merge(out, res)
		later = append(later, unreached...)
		keep = append(keep, kept...)
		if len(deferred) == 0 {
			break
		}
		cur, _ = forPackages(args, deferred)
	}
	if len(keep) > 0 {
		res, err := p.last(ctx, exec, keep, left(), outputBytes)
		if err != nil {
			return nil, err
		}
		out = merge(out, res)
	}
	if len(later) == 0 {
		return out, nil
	}
	res, err := p.plain(ctx, exec, args, later, left(), outputBytes)
	if err != nil {
		return nil, err
	}
	return merge(out, res), nil
}

// merge appends the second result to the first.
func merge(a, b *sandbox.Result) *sandbox.Result {
	if a == nil {
		return b
	}
	out := *a
	out.Output = append(append([]byte(nil), a.Output...), b.Output...)
	out.ExitCode = max(a.ExitCode, b.ExitCode)
	out.TimedOut = a.TimedOut || b.TimedOut
	out.Dropped += b.Dropped
	out.DiskFull = a.DiskFull || b.DiskFull
	if out.DiskNote == "" {
		out.DiskNote = b.DiskNote
	}
	out.Duration += b.Duration
	return &out
}

// round runs both phases once and returns the packages deferred to the
// next round and those left for the plain run (by import path), and the
// binaries of packages the change cannot reach that the first phase kept
// for the last (their id a path in the box).
func (p *Plan) round(ctx context.Context, exec Exec, args []string, timeout time.Duration, outputBytes int) (*sandbox.Result, []string, []string, []stash, error) {
	start := time.Now()
	dir := path.Join(p.tmpDir, "sandgate-canary-"+randomHex(8))
	cmd, err := p.inject(args, "-count=1", "-exec="+p.execPath, "-overlay="+dir+"/overlay.json")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	_, canDefer := forPackages(args, nil)
	one, err := exec(ctx, sandbox.Command{Args: []string{"sh", "-s"}, Stdin: []byte(p.phaseOne(dir, cmd, canDefer)), Timeout: timeout, OutputBytes: outputBytes})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if one.ExitCode == failedInternally {
		return nil, nil, nil, nil, fmt.Errorf("the test gate's canary set-up failed in the box: %s", tail(one.Output))
	}
	var t2j string
	one.Output, t2j = p.tool(one.Output)
	kept, stash, keep, deferred, later := p.stashed(one.Output)
	for i := range keep {
		keep[i].id = path.Join(dir, "l", keep[i].id)
	}
	if len(keep) > 0 && t2j != "" && p.t2j.path == "" {
		p.t2j.path, p.t2j.hash = path.Join(dir, "l", "t2j"), t2j
	}
	if len(stash) == 0 {
		one.Output = kept
		return one, deferred, later, keep, nil
	}
	if timeout > 0 {
		timeout = max(timeout-time.Since(start), time.Second)
	}
	two, err := exec(ctx, sandbox.Command{Args: []string{"sh", "-s"}, Stdin: []byte(phaseTwo(dir, stash)), Timeout: timeout, OutputBytes: outputBytes})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if two.ExitCode == failedInternally {
		return nil, nil, nil, nil, fmt.Errorf("the test gate's second phase failed in the box: %s", tail(two.Output))
	}
	one.Output = kept
	return merge(one, two), deferred, later, keep, nil
}

// plain runs the packages the change cannot reach whose binaries the first
// phase could not keep (by import path) with
// go test as the command has it, through a collector that only adds the
// test log go test needs to cache their results: the -exec flag is the
// first phase's, so a result cached here is found there next time. It
// runs after every round, when no canary source, hidden file or stashed
// binary is left in the box. A test of such a package that starts a
// program the change rewrote (through a helper package, or a script of
// another directory) runs the change's code; in the first phase it could
// have read the seals' sources.
func (p *Plan) plain(ctx context.Context, exec Exec, args, pkgs []string, timeout time.Duration, outputBytes int) (*sandbox.Result, error) {
	argv, _ := forPackages(args, pkgs)
	cmd, err := p.inject(argv, "-count=1", "-exec="+p.execPath)
	if err != nil {
		return nil, err
	}
	script := fmt.Sprintf("rm -rf %[2]s && printf '%%s' %[1]s > %[2]s && chmod 755 %[2]s || exit %[3]d\n%[4]s </dev/null\n",
		quote(passThrough), quote(p.execPath), failedInternally, cmd)
	res, err := exec(ctx, sandbox.Command{Args: []string{"sh", "-s"}, Stdin: []byte(script), Timeout: timeout, OutputBytes: outputBytes})
	if err == nil && res.ExitCode == failedInternally {
		err = fmt.Errorf("the test gate's run of the packages the change cannot reach failed in the box: %s", tail(res.Output))
	}
	return res, err
}

// passThrough is the collector of the plain run: the binary, with the
// test log go test needs to cache its result (go test writes none for a
// binary it hands to -exec).
const passThrough = "#!/bin/sh\n# sandgate: go test's -exec program for packages the change cannot reach; rewritten on every run.\nb=$1; shift; exec \"$b\" \"-test.testlogfile=${b%/*}/testlog.txt\" \"$@\"\n"

func tail(b []byte) string {
	if len(b) > 1024 {
		b = b[len(b)-1024:]
	}
	return strings.TrimSpace(string(b))
}

// inject puts go test flags right after "go test".
func (p *Plan) inject(args []string, flags ...string) (string, error) {
	switch {
	case len(args) > 1 && args[0] == "go" && args[1] == "test":
		q := make([]string, 0, len(args)+len(flags))
		for _, a := range append(append([]string{"go", "test"}, flags...), args[2:]...) {
			q = append(q, quote(a))
		}
		return strings.Join(q, " "), nil
	case len(args) == 3 && args[0] == "sh" && args[1] == "-c":
		line := strings.TrimLeft(args[2], " \t")
		rest, ok := strings.CutPrefix(line, "go test")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			return "", ErrNotGoTest
		}
		q := make([]string, len(flags))
		for i, f := range flags {
			q[i] = quote(f)
		}
		return "go test " + strings.Join(q, " ") + rest, nil
	}
	return "", ErrNotGoTest
}

// quote quotes s as one word for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// phaseOne writes the overlay and the collector, runs go test (which
// compiles the canaries in and hands each binary to the collector), and
// deletes the overlay sources and the hidden files before exiting.
func (p *Plan) phaseOne(dir, cmd string, canDefer bool) string {
	var b strings.Builder
	// Only the canary's own directory is private: a umask over the whole
	// script would reach go test's writes too, and a build cache entry it
	// left mode 0600 where the cache outlives the script (isolation: none,
	// the host's cache) is unreadable to every box that shows that cache
	// to its commands' uid: go then calls std packages missing.
	fmt.Fprintf(&b, "set -e\nD=%s\nrm -rf \"$D\"\n(umask 077 && mkdir -p \"$D/s\" \"$D/r\" \"$D/l\")\n", quote(dir))
	replace := map[string]string{}
	paths := make([]string, 0, len(p.overlay))
	for rel := range p.overlay {
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	for i, rel := range paths {
		f := fmt.Sprintf("%s/s/%d.go", dir, i)
		replace[path.Join(p.root, rel)] = f
		fmt.Fprintf(&b, "printf '%%s' %s > %s\n", quote(string(p.overlay[rel])), quote(f))
	}
	js, _ := json.Marshal(map[string]any{"Replace": replace})
	fmt.Fprintf(&b, "printf '%%s' %s > \"$D/overlay.json\"\n", quote(string(js)))
	fmt.Fprintf(&b, "rm -rf %[2]s\nprintf '%%s' %[1]s > %[2]s\nchmod 755 %[2]s\n", quote(p.collector(dir, canDefer)), quote(p.execPath))
	b.WriteString("set +e\n")
	// test2json is found, copied beside the kept binaries and digested
	// while go test builds, before any code of the change runs: go tool
	// -n starts the go command (0.2 s, twice a run on prometheus), and the
	// last run checks the copy's digest (see last).
	b.WriteString("(T=$(go tool -n test2json </dev/null 2>/dev/null) && cp \"$T\" \"$D/l/t2j\" && sha256sum < \"$D/l/t2j\" | cut -c1-64 > \"$D/t2jh\") & tp=$!\n")
	fmt.Fprintf(&b, "%s </dev/null\nrc=$?\n", cmd)
	fmt.Fprintf(&b, "wait $tp; [ -s \"$D/t2jh\" ] && echo %s\"$(cat \"$D/t2jh\")\"\nrm -f \"$D/t2jh\"\n", quote(p.nonce+" test2json "))
	b.WriteString("rm -rf \"$D/s\" \"$D/overlay.json\"")
	for _, h := range p.hide {
		b.WriteString(" " + quote(path.Join(p.root, h)))
	}
	b.WriteString("\nrm -f \"$D/one\"\n" + dropTool + "rmdir \"$D/r\" \"$D/l\" 2>/dev/null\nrmdir \"$D\" 2>/dev/null\nexit $rc\n")
	return b.String()
}

// dropTool removes the copy of test2json when nothing is left to run
// beside it: no stashed binary ($D/r empty, or gone) and no kept one.
const dropTool = "[ -z \"$(ls -A \"$D/r\" 2>/dev/null)\" ] && [ \"$(ls -A \"$D/l\")\" = t2j ] && rm -f \"$D/l/t2j\"\n"

// tool takes the line of the first phase's output naming test2json's
// digest out of it (see phaseOne); hash is "" when it found none.
func (p *Plan) tool(out []byte) (rest []byte, hash string) {
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), p.nonce+" test2json "); ok && hash == "" {
			hash = h
			continue
		}
		rest = append(rest, line...)
	}
	return rest, hash
}

// collector is the -exec program: it runs no binary, for none may run
// while the canaries' sources are in the box. It stashes each binary with
// its directory and arguments, printing a line that go test attributes to
// the package, and one for each test the binary holds (see selection.go).
// With canDefer (the command's packages can be named anew), once one
// binary is stashed the rest are deferred to another round while the
// box's disk has less than diskReserve free beside them, and a package
// the change cannot reach is kept apart for the last run (see last), with
// the digest of its binary and files, or left for the plain run when the
// disk is low. Otherwise such a package is stashed like the others and
// runs in the second phase, unjudged by the plan and uncached.
func (p *Plan) collector(dir string, canDefer bool) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# sandgate: go test's -exec program for the test gate's canaries; rewritten on every run.\nR=r K= L=defer\n")
	if len(p.unaffected) > 0 && canDefer {
		pats := make([]string, len(p.unaffected))
		for i, d := range p.unaffected {
			pats[i] = quote(path.Join(p.root, d))
		}
		fmt.Fprintf(&b, "case \"$PWD\" in\n%s) R=l K=kept L=later;;\nesac\n", strings.Join(pats, "|"))
	}
	fmt.Fprintf(&b, "D=%s\n", quote(dir))
	if canDefer {
		fmt.Fprintf(&b, `if [ -e "$D/one" ]; then
	avail=$(df -Pk "$D" 2>/dev/null | awk 'NR==2 {print $4}')
	size=$(($(stat -c %%s "$1") / 1024))
	if [ -n "$avail" ] && [ $((avail - size)) -lt %d ]; then echo "%s $L $PWD"; exit 0; fi
fi
`, p.reserve>>10, p.nonce)
	}
	fmt.Fprintf(&b, `n=$(mktemp -d "$D/$R/XXXXXXXX") || exit %d
b=${1##*/}
mkdir "$n/b" && { ln "$1" "$n/b/$b" 2>/dev/null || cp "$1" "$n/b/$b"; } || exit %d
: > "$D/one"
m=${1%%/*}/_testmain.go
if [ -f "$m" ]; then
	sed -n -e 's/^[[:space:]]*{"\(Test[^"]*\)", _x*test[.][^ ,]*},$/%s test \1/p' -e 's/^[[:space:]]*{"\(Fuzz[^"]*\)", _x*test[.][^ ,]*},$/%s test \1/p' "$m"
else
	echo "%s notests"
fi
shift
printf '%%s' "$b" > "$n/bin"
printf '%%s' "$PWD" > "$n/dir"
: > "$n/args"
for a; do
	case $a in
	-test.gocoverdir=*) cp -R "${a#*=}" "$n/cov" 2>/dev/null || mkdir -p "$n/cov"; a="-test.gocoverdir=$n/cov";;
	-test.coverprofile=*) a="-test.coverprofile=$n/cover.out";;
	esac
	printf "'%%s' " "$(printf '%%s' "$a" | sed "s/'/'\\\\''/g")" >> "$n/args"
done
if [ -n "$K" ]; then
	h=$(cd "$n" && sha256sum bin dir args "b/$b" | cut -c1-64 | tr -d '\n') || exit %d
	echo "%s kept ${n##*/} $h $PWD"
else
	echo "%s ${n##*/} $PWD"
fi
`, failedInternally, failedInternally, p.nonce, p.nonce, p.nonce, failedInternally, p.nonce, p.nonce)
	return b.String()
}

// diskReserve is what the collector leaves free on the box's disk for the
// tests themselves and the build cache.
const diskReserve = 1 << 30

// stash is one binary the first phase put aside; hash is, for a binary
// kept for the last, the collector's digest of it and its files.
type stash struct{ id, pkg, hash string }

// stashed reads the first phase's output: the binaries put aside for the
// second phase and those kept for the last (and which package each is),
// the packages deferred to another round, those left for the plain run,
// and the output without those packages' lines.
func (p *Plan) stashed(out []byte) ([]byte, []stash, []stash, []string, []string) {
	var st, keep []stash
	var deferred, later []string
	drop := map[string]bool{}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		var e event
		if json.Unmarshal([]byte(line), &e) != nil || e.Action != "output" || e.Test != "" {
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimSuffix(e.Output, "\n"), p.nonce+" ")
		if !ok {
			continue
		}
		drop[e.Package] = true
		id, pwd, _ := strings.Cut(rest, " ")
		switch id {
		case "defer":
			deferred = append(deferred, e.Package)
			continue
		case "later":
			later = append(later, e.Package)
			continue
		case "test", "notests":
			p.list(e.Package, id, pwd)
			continue
		case "kept":
			f := strings.SplitN(pwd, " ", 3)
			if len(f) == 3 {
				keep = append(keep, stash{id: f[0], pkg: e.Package, hash: f[1]})
			} else {
				later = append(later, e.Package)
			}
			continue
		}
		st = append(st, stash{id: id, pkg: e.Package})
		rel := strings.TrimPrefix(strings.TrimPrefix(pwd, p.root), "/")
		if rel == "" {
			rel = "."
		}
		if pp := p.pkgs[rel]; pp != nil {
			pp.importPath = e.Package
		} else if p.unsealed[rel] && !slices.Contains(p.stray, e.Package) {
			p.stray = append(p.stray, e.Package)
		}
	}
	var kept []byte
	for _, line := range strings.SplitAfter(string(out), "\n") {
		var e event
		if json.Unmarshal([]byte(line), &e) == nil && drop[e.Package] {
			continue
		}
		kept = append(kept, line...)
	}
	return kept, st, keep, deferred, later
}

// list records one test the package's binary holds ("test" and its
// name), or that its test main could not be read ("notests").
func (p *Plan) list(pkg, what, name string) {
	if p.listed == nil {
		p.listed = map[string]map[string]bool{}
	}
	if p.listed[pkg] == nil {
		p.listed[pkg] = map[string]bool{}
	}
	if what == "notests" {
		p.unlisted = append(p.unlisted, pkg)
		return
	}
	p.listed[pkg][name] = true
}

// phaseTwo runs the stashed binaries, as many at once as the box has
// CPUs (go test's default), each in its package's directory with go
// test's arguments, and writes what go test writes after a binary (the
// ok or FAIL line with the package's time), all through go tool
// test2json as go test -json does; then it prints the reports in turn and
// removes the binaries. Its exit code is 1 when a binary failed.
func phaseTwo(dir string, st []stash) string {
	var b strings.Builder
	fmt.Fprintf(&b, "D=%s\nT=$D/l/t2j\n[ -x \"$T\" ] || T=$(go tool -n test2json </dev/null) || exit %d\n", quote(dir), failedInternally)
	ids := make([]string, len(st))
	for i, s := range st {
		ids[i] = s.id
		fmt.Fprintf(&b, "printf '%%s' %s > \"$D/r/%s/pkg\" || exit %d\n", quote(s.pkg), s.id, failedInternally)
	}
	b.WriteString(runScript)
	fmt.Fprintf(&b, "printf '%%s\\n' %s | xargs -P \"$(nproc)\" -I@ sh \"$D/run\" \"$T\" \"$D/r/@\"\nrc=0\n", strings.Join(ids, " "))
	fmt.Fprintf(&b, "for n in %s; do cat \"$D/r/$n/out\"; [ \"$(cat \"$D/r/$n/rc\" 2>/dev/null)\" = 0 ] || rc=1; done\n", strings.Join(ids, " "))
	// The binaries kept for the last stay (see last).
	b.WriteString("rm -rf \"$D/r\" \"$D/run\" \"$D/bin\"\n" + dropTool + "rmdir \"$D/l\" \"$D\" 2>/dev/null\nexit $rc\n")
	return b.String()
}

// runScript writes $D/run, which runs one stashed binary ($2) the way go
// test does, under go tool test2json ($1), and $D/bin, the command
// test2json runs: the binary, then the line go test writes after it (ok,
// or FAIL with the exit status). test2json takes the package's result
// from that command's exit status, as go test -json takes it from the
// binary's, so a binary that exits 0 without a word is a pass with no
// test, and one that exits 1 without a FAIL line a failure.
const runScript = `cat > "$D/run" <<'EOF'
t=$1 n=$2
cd "$(cat "$n/dir")" || exit 1
if [ -d "$n/cov" ]; then GOCOVERDIR=$n/cov; export GOCOVERDIR; fi
"$t" -t -p "$(cat "$n/pkg")" sh "${0%/run}/bin" "$n" </dev/null > "$n/out"
echo $? > "$n/rc"
EOF
cat > "$D/bin" <<'EOF'
n=$1
pkg=$(cat "$n/pkg")
eval "set -- $(cat "$n/args")"
start=$(date +%s%3N)
"$n/b/$(cat "$n/bin")" "$@" </dev/null 2>&1
rc=$?
ms=$(($(date +%s%3N) - start))
el=$(printf '%d.%03ds' $((ms / 1000)) $((ms % 1000)))
if [ $rc -eq 0 ]; then
	printf '\nok  \t%s\t%s\n' "$pkg" "$el"
else
	[ $rc -eq 1 ] || printf '\nexit status %d' $rc
	printf '\nFAIL\t%s\t%s\n' "$pkg" "$el"
fi
exit $rc
EOF
`
