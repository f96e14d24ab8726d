package checks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	sgruntime "github.com/sandgate/sandgate/runtime"
)

// workspaceBlueprint runs parity, lint (the root module only, so Go
// has little to record yet) and the tests of both workspace modules, then
// commits. GOSUMDB=off stands in for the checksum database: the offline
// box checks against the host's cached state (TestBoxReadsChecksumDatabaseState),
// which may or may not prove this module's record; with it, Go records
// the checksum tools/go.sum lacks in go.work.sum, as on a user's clone.
const workspaceBlueprint = `version: 1
name: ws
sandbox: {network: none, env: [GOSUMDB]}
start: prep
nodes:
  prep: {type: shell, run: PREP, next: parity}
  parity: {type: parity, on_pass: lint, on_fail: no}
  lint:
    type: lint
    run: [{argv: [go, vet, ./...]}]
    on_pass: test
    on_fail: no
  test: {type: test, run: go test -json ./... ./tools/..., on_pass: commit, on_fail: no}
  commit: {type: git_commit, message: ws, next: ok}
  ok: {type: succeed}
  no: {type: fail, reason: a gate failed}
`

// TestGoWorkspaceRepo: in a repository with a go.work, Go runs in
// workspace mode in the box as on a user's clone. With the box's old
// GOFLAGS=-mod=mod every go command failed there, parity passed and lint
// failed with no diagnostic; now lint reports the real diagnostic, the
// tests run, and the go.work.sum Go writes (ignored by git) is recorded as
// the toolchain's, voids no verdict and is not committed.
func TestGoWorkspaceRepo(t *testing.T) {
	t.Setenv("GOSUMDB", "off")
	repo := nodetest.WorkspaceRepo(t)
	h := nodetest.NewHarness(t, repo)

	bad := `printf 'package calc\n\nimport "fmt"\n\nfunc Show() { fmt.Printf("%%d\\n", "x") }\n' > show.go`
	sum := h.Run(t, strings.Replace(workspaceBlueprint, "PREP", nodetest.Quote(bad), 1), nil)
	lint := nodetest.LastAttempt(sum, "lint")
	if sum.Status != sgruntime.StatusFailed || !strings.Contains(lint.Feedback, "show.go:5:") || !strings.Contains(lint.Feedback, "Printf format %d has arg") {
		t.Fatalf("lint did not report go vet's diagnostic in workspace mode: run %s\n%s", sum.Status, lint.Feedback)
	}

	sum = h.Run(t, strings.Replace(workspaceBlueprint, "PREP", "'true'", 1), nil)
	if sum.Status != sgruntime.StatusSucceeded {
		t.Fatalf("run %s (%s)\nlint: %s\ntest: %s", sum.Status, sum.Reason, nodetest.LastAttempt(sum, "lint").Feedback, nodetest.LastAttempt(sum, "test").Feedback)
	}
	v := nodetest.ReadVerify(t, sum.Dir)
	tests, _ := v["tests"].(map[string]any)
	if p, _ := tests["passed"].(float64); p < 3 {
		t.Fatalf("the workspace's tests did not all run: %v", v["tests"])
	}
	gates := v["gates"].(map[string]any)
	details, _ := gates["test"].(map[string]any)["details"].(map[string]any)
	if b, _ := json.Marshal(details["toolchain_wrote"]); string(b) != `["go.work.sum"]` {
		t.Fatalf("the test gate's verdict does not name the go.work.sum Go wrote: %v", gates["test"])
	}
	var commit struct{ Files []string }
	b, _ := os.ReadFile(filepath.Join(sum.Dir, "commit.json"))
	if json.Unmarshal(b, &commit); strings.Contains(string(b), "go.work.sum") {
		t.Fatalf("the commit holds go.work.sum: %s", b)
	}
}

// TestGateWritesNamed: a gate command that writes in the workspace voids
// the verdict, and the reason names each file and what it is to the
// change; an ignored file that is not the toolchain's counts too.
func TestGateWritesNamed(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	if err := gitfixture.Write(repo, map[string]string{".gitignore": "*.log\n"}); err != nil {
		t.Fatal(err)
	}
	if err := gitfixture.Commit(repo, "d", "ignore logs"); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ run, want string }{
		{"echo >> calc.go", "calc.go (part of the change)"},
		{"echo x > run.log", "run.log (ignored by git)"},
		{"echo x > go.work.sum", "go.work.sum (part of the change)"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			sum, a := nodetest.GateRun(t, repo, "", "type: lint\nrun: ["+nodetest.Quote(c.run)+"]")
			nodetest.MustFail(t, sum, a, "the workspace changed while the gate ran", c.want)
		})
	}
}

// TestParityGoCannotLoad: parity fails, naming the command and the
// remedy, when the box's go command cannot load the repository's modules
// or a module a package imports: every gate after it would fail for a
// reason no agent can fix. A module in the graph that no package needs
// may be missing, as Go's graph pruning lets a user's build do without
// it (terraform: go list -m all failed offline, every package loaded).
func TestParityGoCannotLoad(t *testing.T) {
	const nowhere = "module calc\n\ngo 1.22\n\nrequire example.com/nowhere v1.0.0\n"
	const nowhereSum = "example.com/nowhere v1.0.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nexample.com/nowhere v1.0.0/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
	const imports = "package calc\n\nimport _ \"example.com/nowhere\"\n"
	cases := []struct {
		name  string
		files map[string]string
		want  string // "" passes
	}{
		{"broken go.work", map[string]string{"go.work": "go 1.22\n\nuse ./missing\n"}, "`go list -m` fails in the sandbox"},
		{"imported module not in the cache", map[string]string{"go.mod": nowhere, "go.sum": nowhereSum, "nowhere.go": imports}, "run `go mod download` in the repository on the host"},
		{"unused module not in the cache", map[string]string{"go.mod": nowhere, "go.sum": nowhereSum}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := nodetest.SeedRepo(t)
			if err := gitfixture.Write(repo, c.files); err != nil {
				t.Fatal(err)
			}
			if err := gitfixture.Commit(repo, "d", c.name); err != nil {
				t.Fatal(err)
			}
			sum, a := nodetest.GateRun(t, repo, "", "type: parity")
			if c.want == "" {
				if sum.Status != sgruntime.StatusSucceeded {
					t.Fatalf("parity fails where every package loads: %s", a.Feedback)
				}
				return
			}
			nodetest.MustFail(t, sum, a, c.want, "go list")
		})
	}
	sum, a := nodetest.GateRun(t, nodetest.WorkspaceRepo(t), "", "type: parity")
	if sum.Status != sgruntime.StatusSucceeded {
		t.Fatalf("parity fails on a workspace that loads: %s", a.Feedback)
	}
}

// TestBoxReadsChecksumDatabaseState: the box sees the host's checksum
// database state (GOPATH/pkg/sumdb) beside the module cache, and cannot
// change the host's copy. Without it an offline box could not check a
// checksum no go.sum lists: prometheus's go list -m all failed in the box
// and passed on the host. The state here is a stand-in file, so the test
// does not depend on what the host's real state can prove.
func TestBoxReadsChecksumDatabaseState(t *testing.T) {
	modcache := strings.TrimSpace(nodetest.HostGo(t, t.TempDir(), "env", "GOMODCACHE"))
	gopath := t.TempDir()
	latest := filepath.Join(gopath, "pkg", "sumdb", "sum.golang.org", "latest")
	const head = "go.sum database tree\n42\nstand-in\n"
	if err := os.MkdirAll(filepath.Dir(latest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(latest, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOPATH", gopath)
	t.Setenv("GOMODCACHE", modcache)
	read := `f="$(go env GOPATH)/pkg/sumdb/sum.golang.org/latest"; printf 'go.sum database tree\n42\nstand-in\n' | cmp - "$f" && echo overwritten > "$f"`
	sum, a := nodetest.GateRun(t, nodetest.SeedRepo(t), "", "type: lint\nrun: ["+nodetest.Quote(read)+"]")
	if sum.Status != sgruntime.StatusSucceeded {
		t.Fatalf("the box does not show the host's checksum database state: %s\n%s", sum.Status, a.Feedback)
	}
	if b, err := os.ReadFile(latest); err != nil || string(b) != head {
		t.Fatalf("the box changed the host's checksum database state: %q %v", b, err)
	}
}
