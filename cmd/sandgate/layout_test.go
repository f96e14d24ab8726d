package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

const modulePath = "github.com/sandgate/sandgate"

// moduleRoot is the directory holding go.mod (asked of go once).
func moduleRoot(t *testing.T) string {
	t.Helper()
	modRoot.once.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if gomod := strings.TrimSpace(string(out)); err == nil && gomod != "" && gomod != os.DevNull {
			modRoot.dir = filepath.Dir(gomod)
		} else {
			modRoot.err = fmt.Errorf("go env GOMOD: %v %q", err, out)
		}
	})
	if modRoot.err != nil {
		t.Fatal(modRoot.err)
	}
	return modRoot.dir
}

var modRoot struct {
	once sync.Once
	dir  string
	err  error
}

// goCmd runs the go tool at the module root with extra environment.
func goCmd(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s go %s: %v\n%s", strings.Join(env, " "), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestImportDirection keeps the library's seams one-way: the sandbox and
// secrets stand alone, the blueprint knows nothing of running, and the
// runtime knows nothing of the built-in nodes or the sandbox. A package
// that starts importing one of ours outside its row fails here, on every
// OS the build covers (the Linux-only files are the ones with the most
// imports, so GOOS is varied). Leaf internal packages — importing nothing
// of ours, like internal/shellquote — bend no seam and are allowed
// anywhere.
func TestImportDirection(t *testing.T) {
	allowed := map[string][]string{
		"sandbox":   nil,
		"secrets":   nil,
		"blueprint": {"secrets"},
		"runtime":   {"blueprint", "secrets"},
		// The OCI image reader needs only the sandbox's image cache.
		"sandbox/image": {"sandbox"},
		// The canary of go test reports reads source trees and writes box
		// commands: it needs only the sandbox's command types.
		"internal/gocanary": {"sandbox"},
		// nodes/ by concept, data flowing one way: box -> change -> verdict
		// -> commit -> push -> CI -> review. Only the nodes facade knows
		// every type; no package below imports one above it. The review
		// queue, the GitHub client and the remote plumbing need no sandbox,
		// and the inbox reads queues and verdicts through their packages,
		// never through the nodes facade.
		"nodes/verdict":             nil,
		"nodes/internal/feedback":   nil,
		"nodes/internal/atomicfile": nil,
		"nodes/testreport":          {"nodes/internal/feedback"},
		"nodes/internal/github":     {"blueprint", "secrets"},
		"nodes/internal/credential": {"blueprint", "nodes/internal/github", "runtime", "secrets"},
		"nodes/internal/alert":      {"blueprint", "runtime", "secrets"},
		"nodes/internal/gitremote":  {"blueprint", "nodes/internal/feedback", "secrets"},
		"nodes/reviewqueue":         {"blueprint", "nodes/internal/atomicfile", "nodes/internal/credential", "nodes/internal/feedback", "nodes/internal/github", "nodes/internal/gitremote", "nodes/verdict", "runtime", "secrets"},
		"nodes/internal/gitstore":   {"nodes/internal/atomicfile", "nodes/internal/feedback", "nodes/internal/wspath", "sandbox"},
		"nodes/internal/command":    {"blueprint", "runtime", "secrets"},
		"nodes/agent":               {"blueprint", "cost", "nodes/internal/wspath", "runtime", "sandbox", "secrets"},
		"nodes/workspace":           {"blueprint", "nodes/internal/atomicfile", "nodes/internal/feedback", "nodes/internal/gitstore", "nodes/internal/wspath", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/gate":       {"blueprint", "nodes/internal/atomicfile", "nodes/internal/feedback", "nodes/internal/gitstore", "nodes/internal/wspath", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/checks":     {"blueprint", "nodes/internal/atomicfile", "nodes/internal/command", "nodes/internal/feedback", "nodes/internal/gate", "nodes/internal/gitstore", "nodes/internal/wspath", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/testgate":   {"blueprint", "internal/gocanary", "nodes/internal/alert", "nodes/internal/atomicfile", "nodes/internal/command", "nodes/internal/feedback", "nodes/internal/gate", "nodes/internal/gitstore", "nodes/internal/wspath", "nodes/testreport", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/promote":    {"blueprint", "nodes/internal/alert", "nodes/internal/atomicfile", "nodes/internal/credential", "nodes/internal/feedback", "nodes/internal/gate", "nodes/internal/github", "nodes/internal/gitremote", "nodes/internal/gitstore", "nodes/internal/wspath", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/ci":         {"blueprint", "internal/gocanary", "nodes/internal/alert", "nodes/internal/atomicfile", "nodes/internal/command", "nodes/internal/credential", "nodes/internal/feedback", "nodes/internal/gate", "nodes/internal/github", "nodes/internal/gitremote", "nodes/internal/gitstore", "nodes/internal/promote", "nodes/internal/testgate", "nodes/internal/wspath", "nodes/testreport", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"nodes/internal/review":     {"blueprint", "nodes/internal/alert", "nodes/internal/atomicfile", "nodes/internal/credential", "nodes/internal/feedback", "nodes/internal/gate", "nodes/internal/github", "nodes/internal/gitremote", "nodes/internal/gitstore", "nodes/internal/promote", "nodes/internal/wspath", "nodes/reviewqueue", "nodes/verdict", "nodes/workspace", "runtime", "sandbox", "sandbox/image", "secrets"},
		"inbox/find":                nil,
		"inbox/draw":                nil,
		"inbox/index":               {"blueprint", "inbox/find", "runtime", "secrets"},
		"inbox/trigger":             {"blueprint", "runtime", "secrets"},
		"inbox":                     {"blueprint", "inbox/draw", "inbox/find", "inbox/index", "nodes/internal/atomicfile", "nodes/internal/credential", "nodes/internal/feedback", "nodes/internal/github", "nodes/internal/gitremote", "nodes/reviewqueue", "nodes/verdict", "runtime", "secrets"},
	}
	for _, goos := range []string{"linux", "darwin"} {
		deps := moduleDeps(t, goos)
		leaves := leafInternal(t, goos, deps)
		for pkg, want := range allowed {
			all, ok := deps[pkg]
			if !ok {
				t.Errorf("GOOS=%s: go list ./... has no package %s", goos, pkg)
				continue
			}
			var got []string
			for _, p := range all {
				rel, ok := strings.CutPrefix(p, modulePath+"/")
				if ok && rel != pkg && !leaves[rel] {
					got = append(got, rel)
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("GOOS=%s: %s imports %v of this module; only %v are allowed", goos, pkg, got, want)
			}
		}
	}
}

// moduleDeps maps each package of the module (its path relative to the
// module) to every package it imports, directly or not, as go list sees
// them for goos. One go list for the whole module: a go list -deps for
// each package (and a go env for each) were some 140 go commands.
func moduleDeps(t *testing.T, goos string) map[string][]string {
	t.Helper()
	out := goCmd(t, []string{"GOOS=" + goos}, "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...")
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if rel, ok := strings.CutPrefix(f[0], modulePath+"/"); ok {
			deps[rel] = f[1:]
		}
	}
	return deps
}

// leafInternal lists the module's internal packages (relative paths) that
// import no package of this module.
func leafInternal(t *testing.T, goos string, deps map[string][]string) map[string]bool {
	t.Helper()
	leaves := map[string]bool{}
	for rel, ds := range deps {
		if !strings.HasPrefix(rel, "internal/") {
			continue
		}
		leaf := true
		for _, dep := range ds {
			leaf = leaf && !strings.HasPrefix(dep, modulePath+"/")
		}
		if leaf {
			leaves[rel] = true
		}
	}
	if !leaves["internal/shellquote"] {
		t.Fatalf("GOOS=%s: internal/shellquote is not a leaf package (it imports %v)", goos, deps["internal/shellquote"])
	}
	return leaves
}
