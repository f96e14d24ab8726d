package gitremote

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/feedback"
)

// Spec is one push of a commit from a repository (GitDir) to a remote,
// or the remote a scratch repository fetches from and pushes to.
type Spec struct {
	GitDir, Remote string
	Commit, Ref    string
	Token          string // HTTP token, answered only to the remote's host
}

// credentialHelper answers git's "get" with the token from the
// environment, and only for the remote's own scheme and host (which the
// node checked against the operator's allowances), so neither argv nor a
// redirect to another host, or from https to http, ever sees it.
const credentialHelper = `!f() { test "$1" = get || exit 0; h=; p=; while IFS= read -r l; do case "$l" in host=*) h="${l#host=}";; protocol=*) p="${l#protocol=}";; esac; done; ` +
	`test -n "$h" && test "$h" = "$SANDGATE_PUSH_HOST" && test "$p" = "$SANDGATE_PUSH_PROTOCOL" || exit 0; printf 'username=x-access-token\npassword=%s\n' "$SANDGATE_PUSH_TOKEN"; }; f`

// Push pushes s.Commit to s.Ref on s.Remote and reports whether the
// remote changed. It never forces: a branch that moved to commits the new
// one does not build on refuses the push, and pushing the commit the
// branch already holds changes nothing. The git process and everything it starts (receive-pack
// and the remote's hooks for a local path, the HTTP helper) share a
// process group that is killed when ctx ends.
func Push(ctx context.Context, s Spec) (bool, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+s.GitDir, "push", "--porcelain", "--", s.Remote, s.Commit+":"+s.Ref)
	cmd.Env = pushEnv(s)
	inGroup(cmd)
	// A killed group's grandchildren may hold the pipes a moment longer.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr feedback.Capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	flag, summary, found := PorcelainRef(stdout.String(), s.Ref)
	if err == nil && found && flag != '!' {
		return flag != '=', nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return false, fmt.Errorf("run git: %w", err)
	}
	why := RemoteSays(stderr.String())
	if found {
		if why != "" {
			summary += "; " + why
		}
		why = strings.TrimSpace(summary)
		if flag == '!' && (strings.Contains(summary, "non-fast-forward") || strings.Contains(summary, "fetch first")) {
			why = "the remote branch holds commits this run did not make (someone else moved it" + remoteTip(ctx, s) +
				"); sandgate never force-pushes, so nothing was overwritten: " + why
		}
	}
	if why == "" {
		why = fmt.Sprintf("git push exited with %v", err)
	}
	if s.Token != "" {
		why = strings.ReplaceAll(why, s.Token, "xxxxx")
	}
	return false, errors.New(strings.TrimSuffix(why, "; "))
}

// remoteTip names the commit the remote's branch holds, for a refusal
// (", to <sha>, not this run's <sha>"); "" when it cannot be read.
func remoteTip(ctx context.Context, s Spec) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+s.GitDir, "ls-remote", "--", s.Remote, s.Ref)
	cmd.Env = pushEnv(s)
	inGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stdout feedback.Capped
	cmd.Stdout = &stdout
	if cmd.Run() != nil {
		return ""
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if sha, ref, ok := strings.Cut(line, "\t"); ok && ref == s.Ref && len(sha) == 40 {
			return fmt.Sprintf(", to %s, not this run's %s", sha[:12], s.Commit[:min(12, len(s.Commit))])
		}
	}
	return ""
}

// pushEnv is a minimal environment: no user or system git config (so no
// one's credential helpers, rewrites or hooks path), no prompts, only the
// transports go-git offered, and a stall limit for HTTP so a remote that
// stops talking fails even without a node timeout.
func pushEnv(s Spec) []string {
	env := []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ALLOW_PROTOCOL=file:git:http:https:ssh"}
	for _, k := range []string{"PATH", "HOME", "SSH_AUTH_SOCK", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cfg := [][2]string{{"core.hooksPath", "/dev/null"}, {"http.lowSpeedLimit", "1"}, {"http.lowSpeedTime", "60"}}
	if u, err := url.Parse(s.Remote); s.Token != "" && err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		cfg = append(cfg, [2]string{"credential.helper", credentialHelper})
		env = append(env, "SANDGATE_PUSH_HOST="+u.Host, "SANDGATE_PUSH_PROTOCOL="+u.Scheme, "SANDGATE_PUSH_TOKEN="+s.Token)
	}
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(cfg)))
	for i, kv := range cfg {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// PorcelainRef finds the status line for ref in `git push --porcelain`
// output: "<flag>\t<from>:<to>\t<summary>".
func PorcelainRef(out, ref string) (flag byte, summary string, found bool) {
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) == 3 && len(parts[0]) == 1 && strings.HasSuffix(parts[1], ":"+ref) {
			return parts[0][0], parts[2], true
		}
	}
	return 0, "", false
}

// RemoteSays keeps what the remote said (hook output arrives as
// "remote: ..." lines) and git's own errors, dropping progress noise.
func RemoteSays(stderr string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "remote: "):
			if t := strings.TrimSpace(strings.TrimPrefix(line, "remote: ")); t != "" {
				keep = append(keep, t)
			}
		case strings.HasPrefix(line, "error: failed to push some refs"):
			// says nothing the ref's status line does not
		case strings.HasPrefix(line, "error: "), strings.HasPrefix(line, "fatal: "):
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "; ")
}

// RepoOf is owner/name from a remote URL's last two path
// elements (https://github.com/owner/name.git, git@host:owner/name).
func RepoOf(remote string) string {
	s := strings.TrimSuffix(strings.TrimRight(remote, "/"), ".git")
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
		if j := strings.IndexByte(s, '/'); j >= 0 {
			s = s[j+1:]
		} else {
			return ""
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 && !strings.HasPrefix(s, "/") {
		s = s[i+1:]
	} else {
		return ""
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return ""
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

// APIBaseOf is the REST API base of the GitHub a remote URL is on:
// https://api.github.com for https://github.com, HOST/api/v3 for GitHub
// Enterprise Server.
func APIBaseOf(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Host == "github.com" {
		return "https://api.github.com"
	}
	return u.Scheme + "://" + u.Host + "/api/v3"
}
