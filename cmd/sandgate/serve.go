package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sandgate/sandgate/inbox"
	"github.com/sandgate/sandgate/nodes"
)

func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "", stderr)
	addr := fs.String("addr", "127.0.0.1:7777", "address to listen on; a non-loopback address needs --token")
	token := fs.String("token", os.Getenv("SANDGATE_TOKEN"), "token every request must carry (default $SANDGATE_TOKEN)")
	var runs, reviews listFlag
	fs.Var(&runs, "runs", "runs directory to show (repeatable; default: the current repository's)")
	fs.Var(&reviews, "reviews", "review queue directory to show (repeatable; default: the current repository's)")
	if pos, err := parseInterspersed(fs, args); err != nil || len(pos) != 0 {
		if err == nil {
			fs.Usage()
		}
		return exitUsage
	}
	if len(runs) == 0 {
		runs = listFlag{defaultRunsDir(".")}
	}
	if len(reviews) == 0 {
		reviews = listFlag{filepath.Join(filepath.Dir(runs[0]), "reviews")}
	}
	if err := inbox.CheckAddr(*addr, *token); err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitUsage
	}
	srv, err := inbox.New(inbox.Options{RunsDirs: absAll(runs), ReviewDirs: absAll(reviews), Token: *token,
		Actions: cliActions{stderr: stderr}, Types: nodes.Types(), By: os.Getenv("USER")})
	if err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitUsage
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
	fmt.Fprintf(stdout, "sandgate inbox on %s (runs: %s; reviews: %s)\n", url, runs.String(), reviews.String())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln, 5*time.Second); err != nil {
		fmt.Fprintln(stderr, "sandgate serve:", err)
		return exitFailed
	}
	return exitOK
}

func absAll(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i], _ = filepath.Abs(d)
	}
	return out
}

// cliActions answers and decides through this binary's own subcommands, in
// child processes: resuming a run needs the CLI's whole sandbox set-up, and
// a child keeps a long resumed run out of the server's process.
type cliActions struct{ stderr io.Writer }

// Answer starts `sandgate answer DIR --to NODE --note NOTE` in the
// background. A child that fails at once (a bad node, a run that is not
// handed off) reports its error; one still running after a moment is the
// resumed run, which the inbox then shows live.
func (a cliActions) Answer(ctx context.Context, runDir, node, note, by string) error {
	cmd := exec.Command(os.Args[0], "answer", runDir, "--to", node, "--note", note)
	var out bytes.Buffer
	// One writer for both streams: exec then copies them one at a time,
	// so the buffer is never written from two goroutines.
	w := io.MultiWriter(&limited{w: &out}, a.stderr)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sandgate answer: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("sandgate answer: %w: %s", err, strings.TrimSpace(out.String()))
		}
	case <-time.After(2 * time.Second):
	}
	return nil
}

// Decide runs `sandgate review approve|reject ID --note N --dir D`.
func (a cliActions) Decide(ctx context.Context, queueDir, id string, approve bool, note, by string) error {
	verb := "reject"
	if approve {
		verb = "approve"
	}
	// The child parses its arguments as flags wherever they stand: an
	// entry directory named like a flag (-by, -allow-endpoint) would
	// swallow the note and decide the entry the note names.
	if strings.HasPrefix(id, "-") {
		return fmt.Errorf("review entry %q: an id may not start with -", id)
	}
	out, err := exec.CommandContext(ctx, os.Args[0], "review", verb, id, "--note", note, "--dir", queueDir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandgate review %s: %w: %s", verb, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// limited keeps the first 64 KiB written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := 64<<10 - l.n; room > 0 {
		k := min(room, len(p))
		l.n += k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
