package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/sandgate/sandgate/sandbox/image"
)

// writeWorkflow makes a repository holding one workflow and a go.mod.
func writeWorkflow(t *testing.T, yml string) string {
	t.Helper()
	repo := t.TempDir()
	wf := filepath.Join(repo, ".github", "workflows")
	if err := os.MkdirAll(wf, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n\ngo 1.23.4\n"), 0o644)
	if err := os.WriteFile(filepath.Join(wf, "ci.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestImageProposeResolves: a workflow's container tag is resolved
// against a registry served on loopback to a pin that sandbox.image
// takes, and the JSON says it is pinned.
func TestImageProposeResolves(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(host + "/ci/go:1.23.4")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	repo := writeWorkflow(t, "jobs:\n  test:\n    container:\n      image: "+host+"/ci/go:1.23.4\n")
	code, out, errs := runCLI("sandbox", "image", "propose", "--resolve", "--format", "json", repo)
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	var got []workflowProposals
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 || len(got[0].Proposals) != 1 {
		t.Fatalf("output %s (%v)", out, err)
	}
	p := got[0].Proposals[0]
	if !p.Pinned || p.SandboxImage != "docker://"+host+"/ci/go:1.23.4@"+want.String() {
		t.Fatalf("proposal %+v, want pinned to %s", p, want)
	}
	if _, err := image.Parse(p.SandboxImage); err != nil {
		t.Fatalf("sandbox.image refuses the proposal: %v", err)
	}
}

// TestImageProposeText: without --resolve, the text names the image and
// how to pin it, and exits 1 when nothing names a toolchain.
func TestImageProposeText(t *testing.T) {
	repo := writeWorkflow(t, "jobs:\n  test:\n    steps:\n      - uses: actions/setup-go@v5\n        with: {go-version-file: go.mod}\n")
	code, out, _ := runCLI("sandbox", "image", "propose", repo)
	if code != exitOK || !strings.Contains(out, "image: docker://golang:1.23.4@sha256:<digest>") || !strings.Contains(out, "crane digest") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	repo = writeWorkflow(t, "jobs:\n  test:\n    steps: [{run: make}]\n")
	if code, out, _ := runCLI("sandbox", "image", "propose", repo); code != exitFailed || !strings.Contains(out, "no job names") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if code, _, errs := runCLI("sandbox", "image", "propose", t.TempDir()); code != exitFailed || !strings.Contains(errs, "no workflow") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestImageProposeAttack: a workflow is untrusted. Its job names,
// values and a YAML error reach the terminal as data (no escape or
// control character), and a version file it names outside the
// repository is not read.
func TestImageProposeAttack(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "go.mod")
	os.WriteFile(outside, []byte("module y\n\ngo 1.77.7\n"), 0o644)
	cases := []string{
		"jobs:\n  \"evil\\e]52;c;eA==\\a\\e[2J\":\n    container: \"x\\e[31m\"\n    steps:\n      - uses: actions/setup-go@v5\n        with: {go-version: \"\\e[1A1.2\"}\n",
		"jobs:\n  t:\n    steps:\n      - uses: actions/setup-go@v5\n        with: {go-version-file: \"../../" + strings.Repeat("../", 20) + outside + "\"}\n",
		"jobs:\n  t:\n    steps:\n      - uses: actions/setup-go@v5\n        with: {go-version-file: \"" + outside + "\"}\n",
		"jobs: \"\\e]8;;http://x\\a\n",
		"\x1b[2J: [\n",
		"jobs:\n  \"\u202eevil\":\n    container: golang:1.23\n",
	}
	ctl := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u202e]")
	for _, yml := range cases {
		repo := writeWorkflow(t, yml)
		for _, format := range []string{"text", "json"} {
			_, out, errs := runCLI("sandbox", "image", "propose", "--format", format, repo)
			if ctl.MatchString(out) || ctl.MatchString(errs) {
				t.Errorf("%q (%s): a control character reached the terminal:\n%q\n%q", yml, format, out, errs)
			}
			if strings.Contains(out, "1.77.7") {
				t.Errorf("%q: read a version file outside the repository:\n%s", yml, out)
			}
		}
	}
}
