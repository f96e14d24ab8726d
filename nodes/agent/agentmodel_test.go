package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// recordingProvider is an in-process agent.Model that plays canned turns
// and keeps what it was asked.
type recordingProvider struct {
	mu    sync.Mutex
	turns []agent.Message
	reqs  []agent.Request
}

func (p *recordingProvider) Chat(_ context.Context, req agent.Request) (*agent.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
	msg := agent.Message{Role: agent.RoleAssistant, Content: "done"}
	if len(p.turns) > 0 {
		msg, p.turns = p.turns[0], p.turns[1:]
	}
	return &agent.Response{ID: "p", Message: msg, Usage: agent.Usage{Input: 10, Output: 2}}, nil
}

func callTurn(name, args string) agent.Message {
	return agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c_" + name, Name: name, Arguments: args}}}
}

const providerBlueprint = `version: 1
name: provider
start: implement
nodes:
  implement: {type: agent, prompt: fix calc, model: house-model, next: test}
  test: {type: test, run: go test -json ./..., on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`

// TestAgentProviderAndDefaultToolset: an embedder's Model answers the
// agent in process (no endpoint, no key), the tool calls it asks for still
// run in the sandbox, and the registry's default toolset is what the
// model is offered (plus the two stop tools).
func TestAgentProviderAndDefaultToolset(t *testing.T) {
	p := &recordingProvider{turns: []agent.Message{
		callTurn("edit_file", `{"path":"calc.go","old":"a - b","new":"a + b"}`),
		callTurn("run", `{"command":"true"}`),
		callTurn("finish", `{"summary":"fixed"}`)}}
	repo := nodetest.SeedRepo(t)
	h := nodetest.NewHarness(t, repo)
	h.RT.Registry = nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Provider: p, Tools: []string{"edit_file", "read_file"}}})
	sum := h.Run(t, providerBlueprint, nil)
	if sum.Status != runtime.StatusSucceeded || sum.Tokens != 36 {
		t.Fatalf("%s (%s), %d tokens", sum.Status, sum.Reason, sum.Tokens)
	}
	var offered []string
	for _, s := range p.reqs[0].Tools {
		offered = append(offered, s.Name)
	}
	if strings.Join(offered, ",") != "edit_file,read_file,finish,handoff" || p.reqs[0].Model != "house-model" {
		t.Fatalf("offered %v to %s", offered, p.reqs[0].Model)
	}
	// run is not in the registry's toolset: the call goes back as an error.
	msgs := p.reqs[2].Messages
	if res := msgs[len(msgs)-1].Content; !strings.Contains(res, `unknown tool "run"`) {
		t.Fatalf("run outside the toolset: %q", res)
	}
}

// TestAgentRefusesAnUnknownDefaultTool: a registry whose default toolset
// names a tool the agent lacks fails when the node is built, not silently
// at the model.
func TestAgentRefusesAnUnknownDefaultTool(t *testing.T) {
	reg := nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{Provider: &recordingProvider{}, Tools: []string{"rm_rf"}}})
	bp, err := reg.Parse("p.yaml", []byte(providerBlueprint))
	if err != nil {
		t.Fatal(err)
	}
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	h.RT.Registry = reg
	_, err = h.RT.Run(context.Background(), bp, runtime.RunOptions{Workspace: h.Repo})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "rm_rf"`) {
		t.Fatalf("run: %v", err)
	}
}
