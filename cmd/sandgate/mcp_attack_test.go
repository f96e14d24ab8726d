//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPBlueprintNotAFile attacks the MCP server with blueprint paths
// that are not files: a FIFO nobody writes (reading it would hang the
// tool, and with it the server's caller) and /dev/zero (reading it would
// grow the server's memory until the kernel kills it). Each is refused
// with the path named. A hang has no deadline here: go test's -timeout
// names the call it hung in.
func TestMCPBlueprintNotAFile(t *testing.T) {
	cs := mcpClient(t, nil)
	fifo := filepath.Join(t.TempDir(), "bp.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// /dev/zero is refused before it is opened: it is no .yaml file, and
	// outside the directories the server reads blueprints from.
	for _, c := range []struct{ tool, key, path, want string }{
		{"validate_blueprint", "path", fifo, "not a regular file"}, {"graph", "path", fifo, "not a regular file"},
		{"start_run", "blueprint", fifo, "not a regular file"},
		{"validate_blueprint", "path", "/dev/zero", "not a blueprint file"}, {"start_run", "blueprint", "/dev/zero", "not a blueprint file"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{c.key: c.path}})
		if err != nil {
			t.Fatalf("%s %s: %v (the tool hung or the server died)", c.tool, c.path, err)
		}
		text := ""
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		if !strings.Contains(text, c.path) || !strings.Contains(text, c.want) {
			t.Errorf("%s %s: %q, want a refusal naming the path", c.tool, c.path, text)
		}
	}
}

// TestMCPHugeBlueprint: a blueprint file past the size cap is refused
// before it is parsed.
func TestMCPHugeBlueprint(t *testing.T) {
	cs := mcpClient(t, nil)
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("version: 1\n# "+strings.Repeat("x", 64<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, text, _ := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": big})
	if !strings.Contains(text, "larger than") {
		t.Errorf("64 MiB blueprint: %q, want refused as too large", text)
	}
}

// TestMCPReadsOnlyBlueprints attacks validate_blueprint, graph and
// start_run with files that are not the caller's to read: /etc/shadow, a
// symlink in the repository to a secret outside it, a path that climbs
// out with "..", a FIFO, a YAML file that is no blueprint and a file that
// is no YAML. Each is refused, and not one line of any of them comes
// back; a blueprint in the repository still validates.
func TestMCPReadsOnlyBlueprints(t *testing.T) {
	repo := gitRepo(t)
	outside := t.TempDir()
	const canary = "canary-mcp-4e7d21"
	secret := filepath.Join(outside, "secret.yaml")
	os.WriteFile(secret, []byte("version: 1\npassword: "+canary+"\n"), 0o644)
	os.Symlink(secret, filepath.Join(repo, "linked.yaml"))
	os.Symlink(outside, filepath.Join(repo, "linkdir"))
	os.WriteFile(filepath.Join(repo, "ci.yaml"), []byte("on: push\njobs: {build: {token: "+canary+"}}\n"), 0o644)
	os.WriteFile(filepath.Join(repo, ".env"), []byte("TOKEN="+canary+"\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(repo, "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(repo, "good.yaml")
	os.WriteFile(good, []byte(answerE2E), 0o644)
	shadow := must(os.ReadFile("/etc/shadow"))
	cs := mcpClientRoots(t, nil, []string{repo})
	for _, c := range []struct{ path, want string }{
		{"/etc/shadow", "not a blueprint file"},
		{"/etc/../etc/shadow.yaml", "outside the directories"},
		{filepath.Join(repo, "linked.yaml"), "escapes"},
		{filepath.Join(repo, "linkdir", "secret.yaml"), "escapes"},
		{filepath.Join(repo, "..", filepath.Base(outside), "secret.yaml"), "outside the directories"},
		{filepath.Join(repo, "pipe.yaml"), "not a regular file"},
		{filepath.Join(repo, "ci.yaml"), "not a blueprint"},
		{filepath.Join(repo, ".env"), "not a blueprint file"},
	} {
		for _, tool := range []struct{ name, key string }{{"validate_blueprint", "path"}, {"graph", "path"}, {"start_run", "blueprint"}} {
			args := map[string]any{tool.key: c.path}
			if tool.name == "start_run" {
				args["repo"] = repo
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.name, Arguments: args})
			if err != nil {
				t.Fatalf("%s %s: %v", tool.name, c.path, err)
			}
			b, _ := json.Marshal(res)
			got := string(b)
			if !strings.Contains(got, c.want) {
				t.Errorf("%s %s: want %q in %s", tool.name, c.path, c.want, got)
			}
			if strings.Contains(got, canary) {
				t.Errorf("BREACH: %s %s returned the canary: %s", tool.name, c.path, got)
			}
			for _, line := range strings.Split(string(shadow), "\n") {
				if name, _, _ := strings.Cut(line, ":"); len(line) > 0 && strings.Contains(got, line) || len(name) > 3 && strings.Contains(got, `"`+name+`"`) {
					t.Fatalf("BREACH: %s %s returned a line of /etc/shadow: %s", tool.name, c.path, got)
				}
			}
		}
	}
	out, text, isErr := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": good})
	if isErr || !out.Valid {
		t.Fatalf("a blueprint in the repository: %v %+v %s", isErr, out, text)
	}
}

// TestMCPSurvivesItsCallers: a condition nesting 524,288 parentheses (a
// fatal stack overflow in expr-lang's parser, once) is a positioned
// problem, and a tool that panics answers with an error; after each the
// same server still serves.
func TestMCPSurvivesItsCallers(t *testing.T) {
	srv := newMCPServer(&serveActions{}, "ana", []string{os.TempDir()})
	addTool(srv, &mcp.Tool{Name: "boom", Description: "panics"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		panic("a bug in a tool")
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	deep := writeBlueprint(t, "version: 1\nname: t\nstart: a\nnodes:\n  a:\n    type: shell\n    run: make\n    edges:\n      - {to: done, when: '"+
		strings.Repeat("(", 1<<19-200)+"true"+strings.Repeat(")", 1<<19-200)+"'}\n      - {to: done}\n  done: {type: succeed}\n")
	good := writeBlueprint(t, answerE2E)
	for i := 0; i < 2; i++ {
		out, _, isErr := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": deep})
		if isErr || out.Valid || len(out.Problems) != 1 || !strings.Contains(out.Problems[0], deep+":9:59: nodes.a.edges[0].when: expression nests deeper than 32") {
			t.Fatalf("deep condition: %v %+v", isErr, out.Problems)
		}
		_, text, isErr := callTool[struct{}](t, cs, "boom", map[string]any{})
		if !isErr || !strings.Contains(text, "boom failed inside the server (a bug in a tool); the server goes on") {
			t.Fatalf("panicking tool: %v %q", isErr, text)
		}
		if out, _, isErr := callTool[validateOut](t, cs, "validate_blueprint", map[string]any{"path": good}); isErr || !out.Valid {
			t.Fatalf("after a panic: %v %+v", isErr, out)
		}
	}
}

// TestMCPAgentTextIsData: an agent hands off with a reason holding
// terminal escapes and a fake "## Take over" with a curl | sh. What
// show_run and run_status tell the attended agent (and the person who
// reads its screen) holds no control character, and the reason is one
// quoted line: the only "## Take over" is the harness's, first.
func TestMCPAgentTextIsData(t *testing.T) {
	repo, _ := stateRepo(t)
	bp := writeBlueprint(t, "version: 1\nname: mcp-text\nstart: implement\nnodes:\n  implement: {type: agent, prompt: fix Add, next: done}\n  done: {type: succeed}\n")
	script := writeScript(t, []map[string]any{toolCall("handoff", map[string]any{"reason": hostileText})})
	code, out, errs := runCLI("run", bp, "--repo", repo, "--model", "script:"+script)
	if code != exitHandoff {
		t.Fatalf("exit %d, want a hand-off\n%s\n%s", code, out, errs)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	cs := mcpClient(t, nil)
	for _, tool := range []string{"show_run", "run_status"} {
		_, text, isErr := callTool[map[string]any](t, cs, tool, map[string]any{"run": id, "repo": repo})
		if isErr {
			t.Fatalf("%s: %s", tool, text)
		}
		terminalSafe(t, tool, text)
		// Outside fences, the headings are the harness's: none in
		// run_status, the lead's in show_run, "## Outcome" first.
		headings, _ := markdownHeadings(text)
		joined := strings.Join(headings, "|")
		if tool == "run_status" && len(headings) > 0 || tool == "show_run" && (!strings.HasPrefix(joined, "## Outcome|## Take over|") ||
			strings.Count(joined, "## Take over") != 1) {
			t.Errorf("%s: headings %q: the agent's take-over got through as the harness's:\n%s", tool, headings, text)
		}
	}
}

// TestMCPErrorsAreData: a repository's blueprint names a key and a node
// type with terminal escapes and a bidi override; start_run refuses it
// with the problems, validate_blueprint lists them. Neither answer (an
// error's text included) holds a control character.
func TestMCPErrorsAreData(t *testing.T) {
	repo, _ := stateRepo(t)
	bp := filepath.Join(repo, "evil.yaml")
	src := "version: 1\nname: evil\nstart: a\n\"\\e]52;c;Y3VybA==\\a\": 1\nnodes:\n  a: {type: \"x\\e[2K\\r\\u202e\"}\n"
	if err := os.WriteFile(bp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := mcpClientRoots(t, nil, []string{repo})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"start_run", map[string]any{"blueprint": bp, "repo": repo}},
		{"validate_blueprint", map[string]any{"path": bp}},
	} {
		_, text, _ := callTool[map[string]any](t, cs, c.tool, c.args)
		if !strings.Contains(text, "Y3VybA==") {
			t.Fatalf("%s: %q does not name the problem", c.tool, text)
		}
		terminalSafe(t, c.tool, text)
	}
}
