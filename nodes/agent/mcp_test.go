package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// mcpServerBinary builds testdata/mcpserver into a directory the box sees
// read-only (EnvOptions.ReadOnly), and returns the binary's path.
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	// Not under /tmp: the box has a /tmp of its own over it.
	dir, err := os.MkdirTemp("/var/tmp", "sg-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // the box runs commands as another uid
	bin := filepath.Join(dir, "mcpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcpserver").CombinedOutput(); err != nil {
		t.Fatalf("build the test MCP server: %v\n%s", err, out)
	}
	return bin
}

// mcpHarness runs blueprints with the box seeing dir read-only.
func mcpHarness(t *testing.T, repo string, o nodes.Options, env nodes.EnvOptions) *nodetest.Harness {
	h := nodetest.NewHarnessWith(t, repo, o)
	env.Repo, env.CacheDir, env.Caches = repo, t.TempDir(), nodes.GoCaches()
	h.RT.Prepare = nodes.Environment(env)
	return h
}

func writeScript(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const mcpBlueprint = `version: 1
name: mcp
start: implement
sandbox: {network: NETWORK}
nodes:
  implement:
    type: agent
    prompt: use the probe
    model: MODEL
    mcp:
      - {name: box, command: [BIN], env: [PROBE_MODE=stdio]}
    tools: TOOLS
    next: done
  done: {type: succeed}
`

// TestMCPServerRunsInTheBox: a scripted agent starts the test server IN the
// box and calls it. The server reports the box's command uid (1000, not the
// harness's), cannot read a host file outside the workspace, cannot reach
// the network under network: none; a call that crashes the server comes
// back to the model as a tool error and the run goes on (its next built-in
// tool call works, the node passes). The recording then replays with the
// server binary gone.
func TestMCPServerRunsInTheBox(t *testing.T) {
	bin := mcpServerBinary(t)
	secret := filepath.Join(t.TempDir(), "host-secret")
	os.WriteFile(secret, []byte("HOST-SECRET"), 0o644)
	script := writeScript(t, `- tool_calls:
    - {function: {name: box__probe, arguments: {path: `+secret+`, dial: "1.1.1.1:53"}}}
- tool_calls:
    - {function: {name: box__crash, arguments: {}}}
- tool_calls:
    - {function: {name: box__echo, arguments: {text: after the crash}}}
- tool_calls:
    - {function: {name: write_file, arguments: {path: note.txt, content: still working}}}
- content: done
`)
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	repo := nodetest.SeedRepo(t)
	src := strings.NewReplacer("NETWORK", "none", "BIN", bin, "TOOLS", "[box.*, write_file]").Replace(mcpBlueprint)
	env := nodes.EnvOptions{ReadOnly: []string{filepath.Dir(bin)}}
	h := mcpHarness(t, repo, nodes.Options{Agent: agent.Options{Record: rec}}, env)
	sum := h.Run(t, strings.Replace(src, "MODEL", "script:"+script, 1), nil)
	tr := transcriptText(t, sum)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run: %s (%s)\n%s", sum.Status, sum.Reason, tr)
	}
	for _, want := range []string{
		`uid=1000 read=refused dial=refused`,    // the box's uid, no host file, no network
		`error: MCP server box, tool crash`,     // the crash is a tool error
		`error: MCP server box, tool echo`,      // and the dead server stays one
		`wrote note.txt`,                        // the run went on
		`"mcp_server":"box","mcp_tool":"probe"`, // the transcript names server and tool
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q:\n%s", want, tr)
		}
	}
	if strings.Contains(tr, "HOST-SECRET") {
		t.Fatal("the MCP server read a host file: it did not run in the box")
	}
	b, _ := os.ReadFile(rec)
	if !strings.Contains(string(b), `"mcp_tools":{"server":"box"`) || strings.Count(string(b), `"mcp_call"`) != 3 {
		t.Fatalf("recording lacks the MCP lines:\n%s", b)
	}
	// Replay: the server binary is gone, the run must not need it.
	os.Remove(bin)
	h = mcpHarness(t, repo, nodes.Options{}, env)
	if sum := h.Run(t, strings.Replace(src, "MODEL", "replay:"+rec, 1), nil); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("replay without the server: %s (%s)", sum.Status, sum.Reason)
	}
}

// TestMCPToolList: unknown tools fail at load (undeclared server, with its
// position) or at run start before any model call (a tool the server does
// not have, naming the closest); a listed tool is all the model is offered.
func TestMCPToolList(t *testing.T) {
	bin := mcpServerBinary(t)
	repo := nodetest.SeedRepo(t)
	env := nodes.EnvOptions{ReadOnly: []string{filepath.Dir(bin)}}
	base := strings.NewReplacer("NETWORK", "none", "BIN", bin).Replace(mcpBlueprint)
	h := mcpHarness(t, repo, nodes.Options{}, env)
	if _, err := h.RT.Registry.Parse("t.yaml", []byte(strings.NewReplacer("TOOLS", "[read_file, bxo.probe]", "MODEL", "script:x").Replace(base))); err == nil ||
		!strings.Contains(err.Error(), `server "bxo", which the node's mcp list does not declare`) || !strings.Contains(err.Error(), "box") {
		t.Fatalf("undeclared server: %v", err)
	}
	m := newModelServer(t)
	h = mcpHarness(t, repo, nodes.Options{Agent: agent.Options{Provider: nil}}, env)
	h.RT.Registry = nodes.NewRegistryWith(nodes.Options{Agent: agent.Options{BaseURL: m.srv.URL + "/v1", APIKeyEnv: "SANDGATE_TEST_MODEL_KEY"}})
	t.Setenv("SANDGATE_TEST_MODEL_KEY", "k")
	sum := h.Run(t, strings.NewReplacer("TOOLS", "[box.prbe]", "MODEL", "m").Replace(base), nil)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, `has no tool "prbe"`) || !strings.Contains(sum.Reason, "box.probe") {
		t.Fatalf("unknown MCP tool: %s (%s)", sum.Status, sum.Reason)
	}
	if len(m.requests) != 0 {
		t.Fatal("the model was called before the toolset was checked")
	}
	if sum := h.Run(t, strings.NewReplacer("TOOLS", "[box.echo]", "MODEL", "m").Replace(base), nil); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run: %s (%s)", sum.Status, sum.Reason)
	}
	var offered []string
	for _, tl := range m.requests[0]["tools"].([]any) {
		offered = append(offered, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(offered, ",") != "finish,handoff,box__echo" {
		t.Fatalf("offered %v; want only the listed tool and the stop tools", offered)
	}
}

// TestMCPOverHTTPGoesThroughTheProxy: an HTTP MCP server on loopback is
// reached only through the run's egress proxy: with its host allowed the
// call works; with it not allowed the node fails at start, the proxy's
// audit log records the denial, and the server sees no request.
func TestMCPOverHTTPGoesThroughTheProxy(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "remote says " + in.Text}}}, nil, nil
	})
	hits := 0
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; h.ServeHTTP(w, r) }))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	script := writeScript(t, `- tool_calls:
    - {function: {name: remote__echo, arguments: {text: hi}}}
- content: done
`)
	bp := `version: 1
name: mcp-http
start: implement
sandbox: {network: allowlist, allow_hosts: [ALLOW]}
nodes:
  implement:
    type: agent
    prompt: call the remote
    model: script:` + script + `
    mcp: [{name: remote, url: "` + srv.URL + `/mcp"}]
    tools: [remote.echo]
    next: done
  done: {type: succeed}
`
	env := nodes.EnvOptions{PermitAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	sum := mcpHarness(t, nodetest.SeedRepo(t), nodes.Options{}, env).Run(t, strings.Replace(bp, "ALLOW", `"`+host+`"`, 1), nil)
	if sum.Status != runtime.StatusSucceeded || !strings.Contains(transcriptText(t, sum), "remote says hi") {
		t.Fatalf("allowed: %s (%s)\n%s", sum.Status, sum.Reason, transcriptText(t, sum))
	}
	audit, _ := os.ReadFile(filepath.Join(sum.Dir, "audit.log"))
	if !strings.Contains(string(audit), "TCP_MISS/200") {
		t.Fatalf("the allowed calls did not go through the proxy:\n%s", audit)
	}
	hits = 0
	sum = mcpHarness(t, nodetest.SeedRepo(t), nodes.Options{}, env).Run(t, strings.Replace(bp, "ALLOW", "example.com", 1), nil)
	if sum.Status != runtime.StatusFailed || !strings.Contains(sum.Reason, "egress proxy denied") {
		t.Fatalf("denied host: %s (%s)", sum.Status, sum.Reason)
	}
	audit, _ = os.ReadFile(filepath.Join(sum.Dir, "audit.log"))
	if !strings.Contains(string(audit), "TCP_DENIED/403") || hits != 0 {
		t.Fatalf("denial: %d requests reached the server; audit:\n%s", hits, audit)
	}
}
