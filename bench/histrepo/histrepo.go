// Package histrepo generates git repositories with a long history, to
// measure and test that the harness's steps cost what the change costs,
// not what the history costs. It streams commits into git fast-import, so
// 650k objects take seconds rather than the minutes of one `git commit`
// per commit.
package histrepo

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Spec shapes a repository: Files files spread two directories deep,
// then Commits commits that each rewrite one line of PerCommit files.
// Every commit adds about PerCommit*3+2 objects (blobs, the trees on their
// paths, the commit).
type Spec struct {
	Files, Commits, PerCommit int
}

// Objects estimates the objects a spec generates.
func (s Spec) Objects() int { return s.Files + s.Files/50 + 10 + s.Commits*(s.PerCommit*3+2) }

// Path is the repository path of file i: d<i%10>/s<i/10%10>/f<i>.go.
func Path(i int) string { return fmt.Sprintf("d%d/s%d/f%04d.go", i%10, i/10%10, i) }

// Generate creates a non-bare repository in dir (which must not exist or
// be empty) with main checked out.
func Generate(ctx context.Context, dir string, s Spec) error {
	if s.PerCommit <= 0 {
		s.PerCommit = 1
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := git(ctx, dir, nil, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(stream(pw, s)) }()
	if err := git(ctx, dir, pr, "fast-import", "--quiet", "--done"); err != nil {
		return err
	}
	return git(ctx, dir, nil, "reset", "-q", "--hard", "main")
}

// stream writes the fast-import commands for s.
func stream(w io.Writer, s Spec) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rev := make([]int, s.Files)
	when := int64(1_600_000_000)
	commit := func(n int, paths []int) {
		fmt.Fprintf(bw, "commit refs/heads/main\ncommitter Gen <gen@example.com> %d +0000\ndata <<EOT\ncommit %d\nEOT\n", when+int64(n), n)
		for _, i := range paths {
			body := content(i, rev[i])
			fmt.Fprintf(bw, "M 100644 inline %s\ndata %d\n%s\n", Path(i), len(body), body)
		}
	}
	all := make([]int, s.Files)
	for i := range all {
		all[i] = i
	}
	commit(0, all)
	seed := uint64(1)
	for n := 1; n <= s.Commits; n++ {
		paths := make([]int, 0, s.PerCommit)
		for k := 0; k < s.PerCommit && k < s.Files; k++ {
			seed = seed*6364136223846793005 + 1442695040888963407
			i := int(seed>>33) % s.Files
			rev[i]++
			paths = append(paths, i)
		}
		commit(n, paths)
	}
	bw.WriteString("done\n")
	return bw.Flush()
}

// StepsBlueprint is the blueprint that measures the harness's steps on a
// generated repository: a one-line edit of file (a Path), then diff_cap,
// git_commit, git_push to remote and a review entry in reviews. The
// benchmark (bench/harness) and the scale test run the same one.
func StepsBlueprint(file, remote, reviews string) string {
	return strings.NewReplacer("FILE", file, "REMOTE", remote, "REVIEWS", reviews).Replace(`version: 1
name: steps
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/revision/revision (fixed)/' FILE", next: cap}
  cap: {type: diff_cap, max_lines: 10, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: "fix: one line", next: push}
  push: {type: git_push, remote: REMOTE, next: review}
  review: {type: review, dir: REVIEWS, next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: too big}
`)
}

// content is file i at revision r: a small Go file whose one line names
// the revision, like a constant bumped by each commit.
func content(i, r int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package s\n\n// F%d is one of many generated functions.\nfunc F%d(x int) int {\n", i, i)
	for l := 0; l < 12; l++ {
		fmt.Fprintf(&b, "\tx = x*%d + %d\n", l+3, i)
	}
	fmt.Fprintf(&b, "\treturn x + %d // revision\n}\n", r)
	return b.String()
}

func git(ctx context.Context, dir string, stdin io.Reader, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Stdin = dir, stdin
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s in %s: %w: %s", args[0], dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RunBlueprint is the blueprint bench/harness runs: the steps of
// StepsBlueprint behind the shell command fix (any one-line edit), then
// clean-checkout CI of the pushed commit running `true`, so the figure
// includes the CI node's own box.
func RunBlueprint(fix, remote, reviews string) string {
	return strings.NewReplacer("FIX", fmt.Sprintf("%q", fix), "REMOTE", remote, "REVIEWS", reviews).Replace(`version: 1
name: steps
start: fix
nodes:
  fix: {type: shell, run: FIX, next: cap}
  cap: {type: diff_cap, max_lines: 10, on_pass: commit, on_fail: stuck}
  commit: {type: git_commit, message: "fix: one line", next: push}
  push: {type: git_push, remote: REMOTE, next: ci}
  ci: {type: ci, provider: command, run: "true", on_pass: review, on_fail: stuck}
  review: {type: review, dir: REVIEWS, next: done}
  done: {type: succeed}
  stuck: {type: handoff, reason: failed}
`)
}
