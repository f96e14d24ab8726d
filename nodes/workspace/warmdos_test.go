package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// notes records a run's progress notes.
type notes struct {
	mu   sync.Mutex
	text []string
}

func (n *notes) Event(runtime.Event) {}
func (n *notes) Note(x runtime.Note) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.text = append(n.text, x.Text)
}

// count is how many notes contain s.
func (n *notes) count(s string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, t := range n.text {
		if strings.Contains(t, s) {
			c++
		}
	}
	return c
}

// hangingBase commits to repo a cgo package whose header includes itself
// twice: the C preprocessor's work doubles with each of its 200 levels,
// so go build and go vet never end. Three small files, no code run.
func hangingBase(t *testing.T, repo string) {
	os.MkdirAll(filepath.Join(repo, "bomb"), 0o755)
	for name, src := range map[string]string{
		"bomb/a.h":     "#include \"a.h\"\n#include \"a.h\"\n",
		"bomb/bomb.go": "package bomb\n\n// #include \"a.h\"\nimport \"C\"\n",
	} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodetest.Run(t, repo, "git", "add", "-A")
	nodetest.Run(t, repo, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bomb")
}

// TestWarmStepThatNeverEndsRunsOnce: a base commit whose build never ends
// (merged earlier, or any repository a user points sandgate at) costs the
// warm step's whole time limit. The first run pays it; a later run on
// the same commit must not pay it again, or every run on that commit
// waits out the limit (20 minutes by default) before its box starts.
func TestWarmStepThatNeverEndsRunsOnce(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	hangingBase(t, repo)
	run := func() *notes {
		n := &notes{}
		rt := &runtime.Runtime{Registry: nodes.NewRegistryWith(nodes.Options{}), RunsDir: t.TempDir(), Observer: n,
			Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: cache, Caches: nodes.GoCaches(),
				Limits: sandbox.Limits{Timeout: 3 * time.Second}})}
		bp, err := rt.Registry.Parse("ok.yaml", []byte("version: 1\nname: ok\nstart: ok\nnodes:\n  ok: {type: succeed}\n"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if _, err := rt.Run(ctx, bp, runtime.RunOptions{Workspace: repo}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := run()
	if first.count("warming the build cache") != 1 || first.count("ran out of") != 1 {
		t.Fatalf("the first run did not try to warm and run out of time, so the test proves nothing: %q", first.text)
	}
	if second := run(); second.count("warming the build cache") != 0 {
		t.Errorf("DOS: a second run on the commit waited out the warm step again: %q", second.text)
	}
}
