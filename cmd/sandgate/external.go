package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// temporalBinary is the external command that runs blueprints on
// Temporal. It lives in its own module (temporal/) so this binary carries
// none of Temporal's dependencies; `sandgate worker` and `sandgate run
// --temporal` hand over to it, git-style.
const temporalBinary = "sandgate-temporal"

// wantsTemporal reports whether run's arguments ask for Temporal.
func wantsTemporal(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--temporal" || a == "-temporal" || strings.HasPrefix(a, "--temporal=") || strings.HasPrefix(a, "-temporal=") {
			return true
		}
	}
	return false
}

// findExternal looks for name beside this executable, then on PATH.
func findExternal(name string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found beside %s nor on PATH; build it from the repository root with: (cd temporal && go build -o \"$(dirname \"$(command -v sandgate)\")\" ./cmd/sandgate-temporal)", name, os.Args[0])
	}
	return p, nil
}

// runExternal runs sandgate-temporal with args and returns its exit code.
func runExternal(args []string, stdout, stderr io.Writer) int {
	bin, err := findExternal(temporalBinary)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate:", err)
		return exitUsage
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "sandgate: run %s: %v\n", bin, err)
		return 1
	}
	// Ctrl-C and SIGTERM are the child's to handle (it cancels the run
	// and reports how it ended): pass them on instead of dying first.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "sandgate: run %s: %v\n", bin, err)
	return 1
}

const workerHelp = `[flags]

Serves runs from a Temporal server on this host by handing over to the
sandgate-temporal binary, found beside sandgate or on PATH. Build it from
the repository root with:

  (cd temporal && go build -o "$(dirname "$(command -v sandgate)")" ./cmd/sandgate-temporal)

sandgate-temporal worker's flags:`

func cmdWorker(args []string, stdout, stderr io.Writer) int {
	if wantsHelp(args) {
		fmt.Fprintf(stdout, "usage: sandgate worker %s\n", workerHelp)
		bin, err := findExternal(temporalBinary)
		if err != nil {
			fmt.Fprintf(stdout, "  (none here: %v)\n", err)
			return exitOK
		}
		cmd := exec.Command(bin, "worker", "--help")
		cmd.Stdout, cmd.Stderr = stdout, stdout
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "sandgate: %s worker --help: %v\n", bin, err)
		}
		return exitOK
	}
	return runExternal(append([]string{"worker"}, args...), stdout, stderr)
}

// wantsHelp reports whether the arguments ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}
