package checks_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgruntime "github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox/image/imagetest"
)

// workflowRepo is a repository with no go.mod whose CI sets up python
// and go at the versions given.
func workflowRepo(t *testing.T, python, goVer string) string {
	t.Helper()
	dir := t.TempDir()
	wf := `on: push
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.1", "` + python + `"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - uses: actions/setup-go@v5
        with: {go-version: "` + goVer + `"}
`
	if err := gitfixture.Seed(dir, map[string]string{"app.py": "print(1)\n", ".github/workflows/ci.yml": wf}, "ci"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// parityIn runs the parity node in a box, on the image's root when
// layout is not "", and returns its status and feedback.
func parityIn(t *testing.T, repo, layout string) (sgruntime.Status, string) {
	t.Helper()
	status, fb, _ := parityWith(t, repo, layout, "")
	return status, fb
}

// parityWith is parityIn with the node's workflows setting (or none) and
// the warnings it published.
func parityWith(t *testing.T, repo, layout, workflows string) (sgruntime.Status, string, string) {
	t.Helper()
	node := "{type: parity, on_pass: ok, on_fail: no}"
	if workflows != "" {
		node = "{type: parity, workflows: " + workflows + ", on_pass: ok, on_fail: no}"
	}
	sb := ""
	if layout != "" {
		sb = "sandbox: {image: \"oci:" + layout + ":t\"}\n"
	}
	sum := nodetest.NewHarness(t, repo).Run(t, "version: 1\nname: p\n"+sb+`start: gate
nodes:
  gate: `+node+`
  ok: {type: succeed}
  no: {type: fail, reason: parity}
`, nil)
	fb, warnings := "", ""
	for _, a := range sum.Attempts {
		fb += a.Feedback
		if w, ok := a.Outputs["warnings"].([]any); ok {
			warnings += fmt.Sprint(w...)
		}
	}
	return sum.Status, fb, warnings
}

// TestParityWorkflowsWarnOnTheHostsRoot: on the host's root a workflow's
// older Go is a warning by default (a newer toolchain than CI's is the
// usual case and no reason to stop a run), a failure with workflows:
// enforce; a go.mod or blueprint pin still fails either way (see
// TestParity).
func TestParityWorkflowsWarnOnTheHostsRoot(t *testing.T) {
	repo := workflowRepo(t, debianPython(t), "1.2")
	status, fb, warnings := parityWith(t, repo, "", "")
	if status != sgruntime.StatusSucceeded || !strings.Contains(warnings, "pins 1.2") {
		t.Fatalf("default: %s, warnings %q\n%s", status, warnings, fb)
	}
	if status, fb, _ := parityWith(t, repo, "", "enforce"); status == sgruntime.StatusSucceeded || !strings.Contains(fb, "pins 1.2") {
		t.Fatalf("enforce: %s\n%s", status, fb)
	}
}

// TestParityComparesWithTheImage: with sandbox.image, parity asks the
// image's tools, not the host's. The workflow sets up the host's Go and
// the Debian python3 the image holds: on the host's root parity passes
// (its go is there); in the image, which holds python3 but no go, it
// fails naming the image; and a python the image does not have fails
// with the image's version in the feedback.
func TestParityComparesWithTheImage(t *testing.T) {
	pyVer := debianPython(t)
	goVer := strings.TrimPrefix(runtime.Version(), "go")
	layout := imagetest.DebianLayout(t, "python3-minimal")

	if status, fb := parityIn(t, workflowRepo(t, pyVer, goVer), ""); status != sgruntime.StatusSucceeded {
		t.Fatalf("on the host's root: %s\n%s", status, fb)
	}
	status, fb := parityIn(t, workflowRepo(t, pyVer, goVer), layout)
	if status == sgruntime.StatusSucceeded || !strings.Contains(fb, "go "+goVer+" (workflow .github/workflows/ci.yml:") ||
		!strings.Contains(fb, "not available in the sandbox (image oci:") {
		t.Fatalf("parity did not ask the image's box for go: %s\n%s", status, fb)
	}
	if strings.Contains(fb, "python:") {
		t.Fatalf("the image's python %s was not taken as the workflow's:\n%s", pyVer, fb)
	}
	status, fb = parityIn(t, workflowRepo(t, "3.2", goVer), layout)
	if status == sgruntime.StatusSucceeded || !strings.Contains(fb, "python: the sandbox (image oci:") || !strings.Contains(fb, "has Python "+pyVer) ||
		!strings.Contains(fb, "pins 3.2") {
		t.Fatalf("a python the image lacks: %s\n%s", status, fb)
	}
}

// debianPython is the version of the host's Debian python3 (the one the
// image gets), which may differ from the python3 first on the host's PATH.
func debianPython(t *testing.T) string {
	t.Helper()
	out := nodetest.Run(t, "/", "/usr/bin/python3", "--version")
	v, ok := strings.CutPrefix(out, "Python ")
	if !ok {
		t.Fatalf("python3 --version: %q", out)
	}
	return v
}
