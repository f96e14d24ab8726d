package ghworkflow

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestPropose reads real-shaped workflows and checks the proposal.
func TestPropose(t *testing.T) {
	files := map[string]string{
		"go.mod":          "module example.com/x\n\ngo 1.22.0\n\ntoolchain go1.23.4\n",
		"sub/go.mod":      "module example.com/y\n\ngo 1.21\n",
		".nvmrc":          "v20.11.1\n",
		".python-version": "3.12\n",
	}
	read := func(name string) ([]byte, error) {
		if b, ok := files[name]; ok {
			return []byte(b), nil
		}
		return nil, os.ErrNotExist
	}
	cases := []struct {
		name, yml string
		want      string // Value() of the first proposal
		note      string // a note the first proposal must carry
	}{
		{"setup-go literal", `
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: '1.23.4'
      - run: go test ./...
`, "docker://golang:1.23.4@sha256:<digest>", ""},
		{"go-version-file takes the toolchain line", `
jobs:
  test:
    steps:
      - uses: actions/setup-go@v5
        with: {go-version-file: go.mod}
`, "docker://golang:1.23.4@sha256:<digest>", ""},
		{"go-version-file without toolchain takes go", `
jobs:
  test:
    steps:
      - uses: actions/setup-go@v5
        with: {go-version-file: ./sub/go.mod}
`, "docker://golang:1.21@sha256:<digest>", ""},
		{"matrix: the newest", `
jobs:
  test:
    strategy:
      matrix:
        go: ['1.22.x', '1.23.x', '1.9']
        os: [ubuntu-latest]
    steps:
      - uses: actions/setup-go@v5
        with:
          go-version: ${{ matrix.go }}
`, "docker://golang:1.23@sha256:<digest>", "chose 1.23, the newest"},
		{"matrix include", `
jobs:
  test:
    strategy:
      matrix:
        include:
          - node: 18
          - node: 22
    steps:
      - uses: actions/setup-node@v4
        with: {node-version: "${{ matrix.node }}"}
`, "docker://node:22@sha256:<digest>", "chose 22"},
		{"env expression", `
env:
  PY: "3.11"
jobs:
  test:
    steps:
      - uses: actions/setup-python@v5
        with: {python-version: "${{ env.PY }}"}
`, "docker://python:3.11@sha256:<digest>", ""},
		{"container string wins", `
jobs:
  test:
    container: golang:1.23.4-bookworm
    steps:
      - uses: actions/setup-node@v4
        with: {node-version-file: .nvmrc}
`, "docker://golang:1.23.4-bookworm@sha256:<digest>", "also installs node 20.11.1"},
		{"container mapping, pinned", `
jobs:
  build:
    container:
      image: ghcr.io/acme/ci@sha256:` + strings.Repeat("ab", 32) + `
      options: --cpus 2
`, "docker://ghcr.io/acme/ci@sha256:" + strings.Repeat("ab", 32), ""},
		{"two toolchains", `
jobs:
  test:
    steps:
      - uses: actions/setup-go@v5
        with: {go-version: "1.23"}
      - uses: actions/setup-node@v4
        with: {node-version: "20"}
`, "docker://golang:1.23@sha256:<digest>", "also sets up node 20"},
		{"alias is not a version", `
jobs:
  test:
    steps:
      - uses: actions/setup-go@v5
        with: {go-version: stable}
`, "", "not one version"},
		{"unknown expression", `
jobs:
  test:
    steps:
      - uses: actions/setup-go@v5
        with: {go-version: "${{ needs.v.outputs.go }}"}
`, "", "does not evaluate"},
		{"container expression", `
jobs:
  test:
    container: ${{ matrix.img }}
`, "", "not a literal registry reference"},
		{"hostile container", "jobs:\n  test:\n    container: \"golang\\e]52;c;eA==\\a:1\"\n", "", "not a literal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := Parse("ci.yml", []byte(c.yml), read)
			if err != nil {
				t.Fatal(err)
			}
			ps := Propose(w)
			if len(ps) == 0 {
				t.Fatalf("no proposal for %+v", w)
			}
			if got := ps[0].Value(); got != c.want {
				t.Errorf("proposed %q, want %q (%+v)", got, c.want, ps[0])
			}
			if c.note != "" && !strings.Contains(strings.Join(ps[0].Notes, "\n"), c.note) {
				t.Errorf("notes lack %q: %q", c.note, ps[0].Notes)
			}
		})
	}
}

// TestParseErrors: a field of the wrong shape names file:line:col and
// the field.
func TestParseErrors(t *testing.T) {
	cases := []struct{ yml, want string }{
		{"jobs: [a, b]\n", "ci.yml:1:7: jobs: is a sequence"},
		{"jobs:\n  t:\n    steps: {a: b}\n", "ci.yml:3:12: jobs.t.steps: is a mapping, want a sequence"},
		{"jobs:\n  t:\n    steps:\n      - uses: actions/setup-go@v5\n        with: [1]\n", "ci.yml:5:15: jobs.t.steps[0].with: is a sequence"},
		{"jobs:\n  t:\n    steps:\n      - uses: actions/setup-go@v5\n        with:\n          go-version: [1]\n", "ci.yml:6:23: jobs.t.steps[0].with.go-version: is a sequence, want a string"},
		{"jobs:\n  t:\n    container: {options: x}\n", "ci.yml:3:5: jobs.t.container: has no image"},
		{"a: &x {b: 1}\nc: *x\n", "c: YAML aliases"},
		{"jobs:\n  t: [\n", "ci.yml:2:1: workflow: not YAML"},
	}
	for _, c := range cases {
		_, err := Parse("ci.yml", []byte(c.yml), nil)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yml, err, c.want)
		}
	}
}

// TestVersions: every resolved version, once.
func TestVersions(t *testing.T) {
	w, err := Parse("ci.yml", []byte(`
jobs:
  lint:
    steps: [{uses: actions/setup-go@v5, with: {go-version: "1.22"}}]
  test:
    steps:
      - {uses: actions/setup-go@v5, with: {go-version: "1.23"}}
      - {uses: actions/setup-python@v5, with: {python-version: "3.x"}}
      - {uses: actions/setup-go@v5, with: {go-version: "1.22"}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Versions(w) {
		got = append(got, v.Name+" "+v.Version)
	}
	if strings.Join(got, ",") != "go 1.22,go 1.23,python 3" {
		t.Fatalf("versions %q", got)
	}
}

// FuzzParse: no input panics, and every proposal is a reference of the
// narrow grammar (nothing of the workflow's text smuggled into it).
func FuzzParse(f *testing.F) {
	f.Add([]byte("jobs:\n  t:\n    container: golang:1.23\n"))
	f.Add([]byte("jobs:\n  t:\n    strategy: {matrix: {go: [1.22, 1.23]}}\n    steps: [{uses: actions/setup-go@v5, with: {go-version: '${{ matrix.go }}'}}]\n"))
	f.Add([]byte("env: {V: '20'}\njobs: {t: {steps: [{uses: actions/setup-node@v4, with: {node-version: '${{ env.V }}'}}]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse("f.yml", data, func(string) ([]byte, error) { return data, nil })
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yml:") {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		for _, p := range Propose(w) {
			if p.Image != "" && !refRE.MatchString(p.Image) {
				t.Fatalf("proposal %q is not a reference", p.Image)
			}
		}
	})
}
