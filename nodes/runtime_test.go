package nodes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// boxedToken passes a credential into the box, which only an operator's
// allowance lets load and start.
const boxedToken = `version: 1
name: boxed-token
sandbox: {env: [DEPLOY_TOKEN]}
start: s
nodes:
  s: {type: shell, run: "true", next: done}
  done: {type: succeed}
`

// TestConfigAllowEnv: Config's one AllowEnv reaches both checks, the
// loader's and the box's; without it both refuse the blueprint.
func TestConfigAllowEnv(t *testing.T) {
	for _, allow := range [][]string{nil, {"DEPLOY_TOKEN"}} {
		c := nodes.Config{Repo: t.TempDir(), AllowEnv: allow, Caches: []sandbox.Cache{}}
		_, loadErr := nodes.NewRuntime(c).Registry.Parse("b.yaml", []byte(boxedToken))
		// The box's own check runs before anything is snapshotted, on a
		// blueprint loaded with the allowance (as one built in code could
		// be).
		allowed := c
		allowed.AllowEnv = []string{"DEPLOY_TOKEN"}
		bp, err := nodes.NewRuntime(allowed).Registry.Parse("b.yaml", []byte(boxedToken))
		if err != nil {
			t.Fatal(err)
		}
		_, boxErr := c.Environment()(context.Background(), t.TempDir(), bp, false)
		refusedLoad := loadErr != nil && strings.Contains(loadErr.Error(), "--allow-env DEPLOY_TOKEN")
		refusedBox := boxErr != nil && strings.Contains(boxErr.Error(), "--allow-env DEPLOY_TOKEN")
		if want := allow == nil; refusedLoad != want || refusedBox != want {
			t.Errorf("AllowEnv %v: load refused %v (%v), box refused %v (%v); want both %v", allow, refusedLoad, loadErr, refusedBox, boxErr, want)
		}
	}
}

// TestNewRuntimeSecrets: the agents' key variable is redacted even when
// its name does not look like a credential.
func TestNewRuntimeSecrets(t *testing.T) {
	rt := nodes.NewRuntime(nodes.Config{Agent: agent.Options{APIKeyEnv: "MODEL_PASS"}, Secrets: []string{"OTHER"}})
	if got := strings.Join(rt.Secrets, ","); got != "OTHER,MODEL_PASS" {
		t.Fatalf("Secrets = %s", got)
	}
	if rt.Prepare == nil || rt.Registry == nil {
		t.Fatal("NewRuntime left out the registry or the environment")
	}
}

// ExampleNewRuntime builds the runtime sandgate's own commands use: the
// built-in node types and a sandboxed copy-on-write workspace of the
// repository for each run.
func ExampleNewRuntime() {
	rt := nodes.NewRuntime(nodes.Config{
		Repo:     ".",
		RunsDir:  ".sandgate/runs",
		Agent:    agent.Options{Model: "script:model.yaml"},
		AllowEnv: []string{"GOPRIVATE_TOKEN"},
		Observer: runtime.ObserverFunc(func(ev runtime.Event) { fmt.Println(ev.Type, ev.Node) }),
	})
	bp, err := rt.Registry.Load("blueprint.yaml")
	if err != nil {
		return
	}
	_, _ = rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: "."})
}
