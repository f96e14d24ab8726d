package credential_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

const keyFlow = `version: 1
name: key-place
start: push
nodes:
  push:
    type: git_push
    remote: https://github.com/acme/calc.git
    credentials: {github_app: {app_id_env: SANDGATE_TEST_APP_ID, key_file: KEY, installation_id: 77}}
    next: done
  done: {type: succeed}
`

// TestAttackKeyFileWhereTheAgentReads: an app's private key inside the
// repository (the box's workspace is its snapshot), the runs directory
// (a box's writes land there) or a cache the box is shown is refused at
// the key_file, also when a link outside leads there; a key elsewhere is
// taken. The environment refuses it too, before anything runs.
func TestAttackKeyFileWhereTheAgentReads(t *testing.T) {
	_, cfg, _ := newApp(t)
	pem, _ := os.ReadFile(cfg.KeyFile)
	repo := nodetest.SeedRepo(t)
	runs, cache, outside := t.TempDir(), t.TempDir(), t.TempDir()
	put := func(path string) string {
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, pem, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	link := filepath.Join(outside, "linked")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(repo, ".github", "app.pem"))
	o := nodes.EnvOptions{Repo: repo, Caches: []sandbox.Cache{{Host: outside + "/none", Lower: []string{cache}, Box: "/cache"}}}
	for _, c := range []struct{ key, want string }{
		{filepath.Join(repo, ".github", "app.pem"), "inside the repository"},
		{filepath.Join(link, ".github", "app.pem"), "inside the repository"},
		{put(filepath.Join(runs, "r1", "box", "app.pem")), "inside the runs directory"},
		{put(filepath.Join(cache, "k", "app.pem")), "inside a cache the box sees"},
		{put(filepath.Join(outside, "keys", "app.pem")), ""},
	} {
		bp, err := nodes.NewRegistry().Parse("test.yaml", []byte(strings.ReplaceAll(keyFlow, "KEY", c.key)))
		if err != nil {
			t.Fatal(err)
		}
		err = nodes.CheckKeyFiles(bp, o, runs)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.key, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "test.yaml:8:") || !strings.Contains(err.Error(), "nodes.push.credentials.github_app.key_file: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.key, err)
		}
	}
	// The environment's own check, for embedders that skip the CLI.
	rt := &runtime.Runtime{Registry: nodes.NewRegistry(), RunsDir: runs, Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, CacheDir: t.TempDir()})}
	bp, _ := rt.Registry.Parse("test.yaml", []byte(strings.ReplaceAll(keyFlow, "KEY", filepath.Join(repo, ".github", "app.pem"))))
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo})
	if err == nil && (sum == nil || sum.Status == runtime.StatusSucceeded) {
		t.Fatal("a run with the key in its repository started")
	}
	if msg := func() string {
		if err != nil {
			return err.Error()
		}
		return sum.Reason
	}(); !strings.Contains(msg, "inside the repository") {
		t.Fatalf("run: %s", msg)
	}
}

// TestKeyFileOpenToOthersRefused: a private key others may read is
// refused at load, as ssh refuses one.
func TestKeyFileOpenToOthersRefused(t *testing.T) {
	_, cfg, _ := newApp(t)
	if err := os.Chmod(cfg.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := nodes.NewRegistry().Parse("test.yaml", []byte(strings.ReplaceAll(keyFlow, "KEY", cfg.KeyFile)))
	if err == nil || !strings.Contains(err.Error(), "test.yaml:8:") || !strings.Contains(err.Error(), "is open to group or others (mode 0644); chmod 600 it") {
		t.Fatalf("load: %v", err)
	}
}
