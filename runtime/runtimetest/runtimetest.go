package runtimetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/secrets"
)

// Case is one configuration of a node type to check.
type Case struct {
	Type runtime.Type
	// Body is the node's YAML configuration without type or edges, e.g.
	// "run: go vet ./...". It must be valid for the type.
	Body string
	// Workspace is the directory the node runs in (default: a temp dir).
	Workspace string
	// Services are passed to the node.
	Services runtime.Services
	// Prepare, when set, builds the environment the attempts run in, as
	// Runtime.Prepare does for a run: its Workspace replaces Workspace and
	// its Services are merged over Services. The suite prepares one
	// environment for the direct attempts and the runtime prepares another
	// for the run; both are closed when the test ends.
	Prepare runtime.Prepare
	// AllowError, when set, says why Run may return an error in this
	// configuration (for example "the service is down on purpose"). Empty
	// means any error fails the suite.
	AllowError string
	// AllowMissing, when set, says why a result may leave declared outputs
	// out in this configuration (for example "promotion refuses without a
	// passing verdict, and a refusal publishes nothing"). Undeclared
	// outputs and wrong types fail the suite regardless.
	AllowMissing string
	// Parallel is how many attempts of one node instance the concurrency
	// check runs at once (default 4).
	Parallel int
	// CancelWithin bounds how long Run may take to return once its context
	// is canceled (default 5s).
	CancelWithin time.Duration
}

// Run checks a node type against the contract in the package
// documentation. It reports failures through t.
func Run(t testing.TB, c Case) {
	t.Helper()
	if c.CancelWithin <= 0 {
		c.CancelWithin = 5 * time.Second
	}
	if c.Parallel <= 0 {
		c.Parallel = 4
	}
	if c.Workspace == "" {
		c.Workspace = t.TempDir()
	}
	s := &suite{c: c}
	group(t, "declaration", func(t testing.TB) { checkSpec(t, c.Type.Spec) })
	if s.bp = load(t, c); s.bp == nil {
		return
	}
	if !s.prepare(t) {
		return
	}
	group(t, "result", s.checkResult)
	group(t, "concurrency", s.checkConcurrent)
	group(t, "cancel", s.checkCancel)
	group(t, "in a run", s.checkInRun)
}

// group runs one group of rules: as a subtest where t can have them, else
// inline, under a log line naming the group.
func group(t testing.TB, name string, f func(testing.TB)) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Run(name, func(t *testing.T) { f(t) })
		return
	}
	t.Logf("runtimetest: %s", name)
	f(t)
}

// suite is the state the checks share: the blueprint and the environment
// direct attempts run in.
type suite struct {
	c         Case
	bp        *blueprint.Blueprint
	runDir    string
	workspace string
	services  runtime.Services
	redact    *secrets.Redactor
}

func load(t testing.TB, c Case) *blueprint.Blueprint {
	t.Helper()
	reg := runtime.NewRegistry()
	if err := reg.Register(c.Type); err != nil {
		t.Errorf("register: %v", err)
		return nil
	}
	src := fmt.Sprintf("version: 1\nname: conformance\nstart: node\nnodes:\n  node:\n    type: %s\n    on_pass: ok\n    on_fail: no\n%s  ok: {type: succeed}\n  no: {type: fail}\n",
		c.Type.Spec.Name, indent(c.Body))
	bp, err := reg.Parse("conformance.yaml", []byte(src))
	if err != nil {
		t.Errorf("the case's Body does not validate against the type:\n%v\n---\n%s", err, src)
		return nil
	}
	return bp
}

func indent(body string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if l != "" {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// prepare builds the environment of the direct attempts.
func (s *suite) prepare(t testing.TB) bool {
	t.Helper()
	s.runDir = filepath.Join(t.TempDir(), "conformance")
	s.workspace = s.c.Workspace
	s.redact = secrets.New(nil)
	s.services = s.c.Services
	if s.c.Prepare == nil {
		return true
	}
	// The runtime creates a run's directory before preparing it.
	if err := os.MkdirAll(s.runDir, 0o755); err != nil {
		t.Errorf("run directory: %v", err)
		return false
	}
	env, err := s.c.Prepare(secrets.NewContext(context.Background(), s.redact), s.runDir, s.bp, false)
	if err != nil {
		t.Errorf("Case.Prepare: %v", err)
		return false
	}
	t.Cleanup(func() { closeEnv(t, env) })
	if env.Workspace != "" {
		s.workspace = env.Workspace
	}
	s.services = s.services.Merge(env.Services)
	return true
}

func closeEnv(t testing.TB, env *runtime.Environment) {
	if env.Close != nil {
		if err := env.Close(); err != nil {
			t.Errorf("closing the prepared environment: %v", err)
		}
	}
	if env.Discard != nil {
		_ = env.Discard()
	}
}

// build makes a node instance through the type's factory.
func (s *suite) build(t testing.TB) runtime.Node {
	t.Helper()
	n, err := s.c.Type.New(s.bp.Nodes["node"])
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if n == nil {
		t.Fatal("factory returned a nil node without an error")
	}
	return n
}

// input is attempt n's input, each with its own attempt directory.
func (s *suite) input(attempt int) *runtime.Input {
	return &runtime.Input{RunID: filepath.Base(s.runDir), NodeID: "node", Attempt: attempt, Spec: s.bp.Nodes["node"],
		Scope: &blueprint.Scope{}, Workspace: s.workspace, Dir: filepath.Join(s.runDir, "nodes", "node", fmt.Sprint(attempt)),
		Logger: discardLogger, Redactor: s.redact, Services: s.services}
}
