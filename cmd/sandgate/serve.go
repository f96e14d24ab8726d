package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sandgate/sandgate/blueprints"
	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/inbox/trigger"
	"github.com/sandgate/sandgate/nodes"
)

const serveHelp = `[--addr HOST:PORT] [--runs-dir DIR]... [--reviews-dir DIR]... [--triggers FILE]

Serves the web inbox: runs (live while they run), hand-offs to answer and
the review queue to approve or reject. Approvals land changes in this
process with the --allow-endpoint prefixes given here; an answer starts
'sandgate answer', which keeps the model and allowances the run was started
with, except those of --model, --base-url, --api-key-env, --allow-env and
--allow-endpoint given here; its output is in the run's answer-<n>.log. An
answered run goes on when the server stops (sandgate cancel stops it).

flags:`

// serveConfig is what cmdServe parsed: the inbox and its actions.
type serveConfig struct {
	runs, reviews []string
	token, by     string
	people        *inbox.People
	acts          *serveActions
	// triggerFile is --triggers; triggers serves it (servetriggers.go),
	// reading started runs' journals every triggerPoll (default 2s).
	triggerFile string
	triggers    *trigger.Handler
	starter     *triggerStarter
	triggerPoll time.Duration
}

func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", serveHelp, stdout, stderr)
	addr := fs.String("addr", "127.0.0.1:7777", "address to listen on; a non-loopback address needs --token")
	token := fs.String("token", os.Getenv("SANDGATE_TOKEN"), "token every request must carry (default $SANDGATE_TOKEN)")
	tokenFile := fs.String("token-file", "", "file of \"TOKEN NAME\" lines: each person's token, their name recorded on their answers and decisions")
	proxyHeader := fs.String("trusted-proxy-header", "", "header naming the signed-in person (X-Forwarded-User), set by an SSO proxy; believed only from --trusted-proxy")
	var proxies listFlag
	fs.Var(&proxies, "trusted-proxy", "address or CIDR of the reverse proxy that sets --trusted-proxy-header (repeatable)")
	by := fs.String("by", "", "who answers and decides in this inbox, as recorded (default: the login name)")
	var runs, reviews listFlag
	fs.Var(&runs, "runs-dir", "runs directory to show (repeatable; default: the current repository's)")
	fs.Var(&reviews, "reviews-dir", "review queue directory to show (repeatable; default: the current repository's)")
	var bpDirs listFlag
	fs.Var(&bpDirs, "blueprints-dir", "directory of blueprint files (NAME.yaml) the inbox can start runs of, beside the shipped ones; a name there hides the shipped blueprint of that name (repeatable)")
	triggers := fs.String("triggers", "", "trigger file: who may start which blueprint from GitHub webhooks (POST /hooks/github) and Slack slash commands (POST /hooks/slack); see the README")
	fs.alias("runs", "runs-dir")
	fs.alias("reviews", "reviews-dir")
	var rf runFlags
	fs.StringVar(&rf.model, "model", "", "model of answered runs' agent nodes (as run --model)")
	fs.StringVar(&rf.baseURL, "base-url", "", "endpoint of answered runs' agent nodes (as run --base-url)")
	fs.StringVar(&rf.apiKeyEnv, "api-key-env", "", "variable holding answered runs' API key (as run --api-key-env)")
	fs.Var(&rf.allowEnv, "allow-env", "credential variable answered runs may pass into the box (repeatable, as run --allow-env)")
	fs.Var(&rf.allowEndpoints, "allow-endpoint", "URL prefix approvals and answered runs may send tokens to (repeatable, as review/run --allow-endpoint)")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	people, err := servePeople(*tokenFile, *proxyHeader, proxies)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitUsage
	}
	// Any way of naming the person also shuts out everyone else: it
	// guards a non-loopback address as a token does.
	guard := *token
	if people != nil {
		guard = "people"
	}
	if err := inbox.CheckAddr(*addr, guard); err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate serve: cannot find this binary to run answers with:", err)
		return exitFailed
	}
	cfg := serveConfig{runs: runs, reviews: reviews, token: *token, by: decider(*by), people: people,
		acts: &serveActions{exe: exe, answerArgs: rf.answerArgs(), allow: rf.allowEndpoints, blueprints: blueprintSet{dirs: absAll(bpDirs), shipped: blueprints.FS}}, triggerFile: *triggers}
	srv, err := cfg.server()
	if err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitUsage
	}
	if cfg.triggers != nil {
		defer cfg.triggers.Close()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitFailed
	}
	url := "http://" + ln.Addr().String() + "/"
	if *token != "" {
		url += "?token=<your token>"
	}
	fmt.Fprintf(stdout, "sandgate inbox on %s (runs: %s; reviews: %s)\n", url, strings.Join(cfg.runs, ","), strings.Join(cfg.reviews, ","))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln, 5*time.Second); err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitFailed
	}
	return exitOK
}

// server builds the inbox, filling in the default directories.
func (c *serveConfig) server() (*inbox.Server, error) {
	if len(c.runs) == 0 {
		c.runs = []string{defaultRunsDir(".")}
	}
	if len(c.reviews) == 0 {
		c.reviews = []string{filepath.Join(filepath.Dir(c.runs[0]), "reviews")}
	}
	c.runs, c.reviews = absAll(c.runs), absAll(c.reviews)
	hooks, err := c.triggerHooks()
	if err != nil {
		return nil, err
	}
	srv, err := inbox.New(inbox.Options{RunsDirs: c.runs, ReviewDirs: c.reviews, Token: c.token,
		Actions: c.acts, Types: nodes.Types(), By: c.by, People: c.people, Blueprints: c.acts.startable(), Hooks: hooks})
	if c.starter != nil {
		c.starter.inbox = srv
	}
	return srv, err
}

// servePeople builds the inbox's People from the flags, or nil when none
// is given.
func servePeople(tokenFile, header string, proxies []string) (*inbox.People, error) {
	if tokenFile == "" && header == "" && len(proxies) == 0 {
		return nil, nil
	}
	p := &inbox.People{ProxyHeader: header}
	if (header == "") != (len(proxies) == 0) {
		return nil, errors.New("--trusted-proxy-header and --trusted-proxy go together: the header is believed only from the proxy's addresses")
	}
	var err error
	if p.TrustedProxies, err = inbox.ParseProxies(proxies); err != nil {
		return nil, err
	}
	if tokenFile != "" {
		if p.Tokens, err = inbox.LoadTokens(tokenFile); err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
	}
	return p, nil
}

// answerArgs are the run flags serve was given, for `sandgate answer`.
func (rf *runFlags) answerArgs() []string {
	var out []string
	for _, f := range []struct{ name, v string }{{"--model", rf.model}, {"--base-url", rf.baseURL}, {"--api-key-env", rf.apiKeyEnv}} {
		if f.v != "" {
			out = append(out, f.name, f.v)
		}
	}
	for _, v := range rf.allowEnv {
		out = append(out, "--allow-env", v)
	}
	for _, v := range rf.allowEndpoints {
		out = append(out, "--allow-endpoint", v)
	}
	return out
}

func absAll(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i], _ = filepath.Abs(d)
	}
	return out
}
