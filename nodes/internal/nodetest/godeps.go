package nodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/internal/gitfixture"
)

// Dependency fixtures require github.com/google/uuid v1.6.0: sandgate's
// own build compiles it, so every machine that builds sandgate has it in
// its module cache, which the box reads offline.
const (
	UUIDRequire = "require github.com/google/uuid v1.6.0\n"
	UUIDSum     = "github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\n" +
		"github.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n"
	// UUIDOfX is uuid.NewSHA1(uuid.NameSpaceDNS, []byte("x")).
	UUIDOfX = "05b16a01-46c6-56dd-bd6e-c6dfb4a1427a"
	// IDSource is a file of package calc whose ID uses the dependency.
	IDSource = "package calc\n\nimport \"github.com/google/uuid\"\n\n// ID names x in the DNS namespace.\nfunc ID() string { return uuid.NewSHA1(uuid.NameSpaceDNS, []byte(\"x\")).String() }\n"
	// FixedCalc is SeedRepo's calc.go with Add fixed.
	FixedCalc = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a + b }\n"
	// IDTest tests ID.
	IDTest = "package calc\n\nimport \"testing\"\n\nfunc TestID(t *testing.T) {\n\tif got := ID(); got != \"" + UUIDOfX + "\" {\n\t\tt.Fatalf(\"ID() = %s\", got)\n\t}\n}\n"
)

// VendoredRepo is SeedRepo's module, Add fixed, requiring the uuid
// dependency, with vendor/ as go mod vendor makes it, committed: Go builds
// it from vendor/ by default, as a user's clone does. Its tests pass.
func VendoredRepo(t testing.TB) string {
	t.Helper()
	dir := SeedRepo(t)
	files := map[string]string{
		"go.mod":     "module calc\n\ngo 1.22\n\n" + UUIDRequire,
		"go.sum":     UUIDSum,
		"id.go":      IDSource,
		"id_test.go": IDTest,
		"calc.go":    FixedCalc,
	}
	if err := gitfixture.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	HostGo(t, dir, "mod", "download", "github.com/google/uuid")
	HostGo(t, dir, "mod", "vendor")
	if err := gitfixture.Commit(dir, "d", "vendor uuid"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// HostGo runs the go command on the host in dir with the host's caches,
// outside any workspace and with no GOFLAGS of the caller's, for fixtures.
func HostGo(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// WorkspaceRepo is a repository with a go.work joining the root module
// (SeedRepo's calc, Add fixed) and tools/, a module that requires the
// uuid dependency; /go.work.sum is ignored, as prometheus ignores it.
// tools/go.sum lists only the dependency's go.mod checksum, so Go
// records the module's checksum in go.work.sum when it builds tools
// (the box can verify it only with GOSUMDB=off, as it is offline).
func WorkspaceRepo(t testing.TB) string {
	t.Helper()
	dir := SeedRepo(t)
	files := map[string]string{
		"go.work":          "go 1.22\n\nuse (\n\t.\n\t./tools\n)\n",
		".gitignore":       "/go.work.sum\n",
		"calc.go":          FixedCalc,
		"tools/go.mod":     "module tools\n\ngo 1.22\n\n" + UUIDRequire,
		"tools/go.sum":     strings.SplitAfter(UUIDSum, "\n")[1],
		"tools/id.go":      strings.Replace(IDSource, "package calc", "package tools", 1),
		"tools/id_test.go": strings.Replace(IDTest, "package calc", "package tools", 1),
	}
	if err := gitfixture.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	HostGo(t, dir, "mod", "download", "github.com/google/uuid@v1.6.0")
	if err := gitfixture.Commit(dir, "d", "a workspace"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work.sum")); err == nil {
		t.Fatal("the fixture left a go.work.sum")
	}
	return dir
}
