package checks

import (
	"fmt"
	"testing"
)

// TestWorkflowVersions: the pins parity takes from the printed files:
// one want per tool, other jobs' versions as alternatives, a version
// file read from what the box printed, a broken workflow pinning nothing.
func TestWorkflowVersions(t *testing.T) {
	out := "\x1ego.mod\nmodule x\n\ngo 1.22\n\ntoolchain go1.23.4\n" +
		"\x1e.github/workflows/ci.yml\njobs:\n  a:\n    steps: [{uses: actions/setup-go@v5, with: {go-version-file: go.mod}}]\n" +
		"  b:\n    steps: [{uses: actions/setup-go@v5, with: {go-version: '1.22'}}, {uses: actions/setup-node@v4, with: {node-version: 20}}]\n" +
		"\x1e.github/workflows/broken.yml\njobs: [\n"
	got := fmt.Sprint(workflowVersions(out))
	want := fmt.Sprint([]toolWant{
		{tool: "go", version: "1.23.4", source: "workflow .github/workflows/ci.yml:3:65", anyOf: []string{"1.22"}},
		{tool: "node", version: "20", source: "workflow .github/workflows/ci.yml:5:121"},
	})
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if m := (toolWant{tool: "go", version: "1.23.4", source: "w", anyOf: []string{"1.22"}}).mismatch("the sandbox", 0, "go1.22.9"); m != "" {
		t.Fatalf("a version another job sets up is a mismatch: %s", m)
	}
	if m := (toolWant{tool: "go", version: "1.23.4", source: "w", anyOf: []string{"1.22"}}).mismatch("the sandbox (image x)", 0, "go1.21.0"); m != "go: the sandbox (image x) has go1.21.0, w pins 1.23.4 or 1.22" {
		t.Fatalf("mismatch %q", m)
	}
}
