package workspace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox/image/imagetest"
)

// TestImageBlueprintRunsTheImagesTools: a blueprint with sandbox.image
// runs its command with the image's tool, which the host does not have
// (on the host's root the node would fail: no imgtool there).
func TestImageBlueprintRunsTheImagesTools(t *testing.T) {
	dir := imagetest.ToolLayout(t)
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	sum := h.Run(t, `version: 1
name: image
sandbox: {image: "oci:`+dir+`:t"}
start: tool
nodes:
  tool: {type: shell, run: {argv: [imgtool, --version]}, on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`, nil)
	if sum.Status != runtime.StatusSucceeded {
		node, fb := sum.LastFeedback()
		t.Fatalf("the image's tool did not run: %s (%s: %s)", sum.Status, node, fb)
	}
}

// TestImageBlueprintFailsClosed: an image that cannot be read stops the
// run before any box starts, naming the blueprint's position; it never
// runs on the host's root.
func TestImageBlueprintFailsClosed(t *testing.T) {
	h := nodetest.NewHarness(t, nodetest.SeedRepo(t))
	bp, err := h.RT.Registry.Parse("test.yaml", []byte(`version: 1
name: image
sandbox:
  image: oci:/nonexistent/sandgate-image:t
start: tool
nodes:
  tool: {type: shell, run: {argv: ["true"]}, on_pass: done, on_fail: done}
  done: {type: succeed}
`))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := h.RT.Run(context.Background(), bp, runtime.RunOptions{Workspace: h.Repo})
	msg := ""
	if err != nil {
		msg = err.Error()
	} else if sum != nil {
		if sum.Status == runtime.StatusSucceeded {
			t.Fatal("the run succeeded without its image")
		}
		msg = sum.Reason
	}
	if !strings.Contains(msg, "test.yaml:4:10") || !strings.Contains(msg, "does not fall back") {
		t.Fatalf("the failure does not name the image's position: %q", msg)
	}
}
