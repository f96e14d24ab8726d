package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The harness's git processes. Two kinds run:
//
//   - in the user's repository, only `git rev-parse` (userGit): it reads
//     that repository's config, which is untrusted, so everything in it
//     that could start a program is overridden on the command line (the
//     highest-priority config) or disabled by the environment: no
//     transport at all (GIT_ALLOW_PROTOCOL empty, so a promisor remote
//     can never be fetched from, whatever protocol.*.allow says), no
//     fsmonitor, no hooks, no replace refs. The harness user's global
//     config stays (it may hold safe.directory).
//   - in the harness's own repositories, the object stores and the
//     snapshots (ownGit): no system or global config either, so nobody's
//     hooks, filters, fsmonitor or aliases apply. They read the user's
//     objects only as alternates (GIT_ALTERNATE_OBJECT_DIRECTORIES), which
//     git reads as data.

// userGitConfig overrides what a user repository's config could run.
var userGitConfig = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false"}

// baseGitEnv is the environment every harness git process shares: the
// caller's, minus anything that would point git at another repository
// or object directory.
func baseGitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_ALLOW_PROTOCOL=", "GIT_OPTIONAL_LOCKS=0")
}

// ownGitEnv is baseGitEnv without global config, borrowing objects from
// the object directory alt (the user's), if set.
func ownGitEnv(alt string) []string {
	env := append(baseGitEnv(), "GIT_CONFIG_GLOBAL=/dev/null")
	if alt != "" {
		// The variable is a colon-separated list; git reads an entry in
		// double quotes C-style, so a path holding a colon stays one.
		if strings.ContainsAny(alt, `:"\`) {
			alt = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(alt) + `"`
		}
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alt)
	}
	return env
}

// gitCmd is one git invocation.
type gitCmd struct {
	dir   string // working directory (or "" with --git-dir in args)
	env   []string
	args  []string
	stdin io.Reader
	out   io.Writer // standard output; captured when nil
	// fileLimit, when set, caps the size of any file git writes (through
	// prlimit(1), where util-linux has it): past it git is killed and run
	// fails with errFileLimit.
	fileLimit int64
}

// errFileLimit is a git process killed for writing past gitCmd.fileLimit.
var errFileLimit = errors.New("git was stopped at the file-size limit")

// run runs the command and returns its trimmed standard output (when
// not sent to c.out).
func (c gitCmd) run(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "git", c.args...)
	if p, err := exec.LookPath("prlimit"); err == nil && c.fileLimit > 0 {
		cmd = exec.CommandContext(ctx, p, append([]string{fmt.Sprintf("--fsize=%d", c.fileLimit), "--", "git"}, c.args...)...)
	}
	cmd.Dir, cmd.Env, cmd.Stdin = c.dir, c.env, c.stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &capWriter{b: &errb, max: 8 << 10}
	if c.out != nil {
		cmd.Stdout = c.out
	}
	if err := cmd.Run(); err != nil {
		if killedByFileLimit(err) {
			err = errFileLimit
		}
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(c.args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// ownGit runs git in one of the harness's repositories (gitDir).
func ownGit(ctx context.Context, gitDir, alt string, args ...string) (string, error) {
	return gitCmd{env: ownGitEnv(alt), args: append([]string{"--git-dir=" + gitDir}, args...)}.run(ctx)
}

// capWriter keeps the first max bytes written to it.
type capWriter struct {
	b   *bytes.Buffer
	max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
