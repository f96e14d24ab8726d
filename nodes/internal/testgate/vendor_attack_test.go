package testgate_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// vendorFake replaces the vendored dependency with a 10-line fake that
// passes the repository's tests and runs its own code on every machine
// that builds the change: users' builds compile vendor/.
const vendorFake = "rm vendor/github.com/google/uuid/*.go && printf '%s\\n' " +
	"'package uuid' '' 'import \"os\"' '' " +
	"'func init() { os.WriteFile(\"/tmp/sg-vendor-fake-ran\", []byte(\"x\"), 0o644) }' '' " +
	"'type UUID [16]byte' '' 'var NameSpaceDNS UUID' '' " +
	"'func NewSHA1(UUID, []byte) UUID { return UUID{} }' '' " +
	"'func (UUID) String() string { return \"" + nodetest.UUIDOfX + "\" }' > vendor/github.com/google/uuid/uuid.go"

// TestAttackVendoredFake: with the box's old GOFLAGS=-mod=mod no gate
// compiled vendor/, so a fake dependency there passed the test gate and
// went to users, whose go build compiles it. The gate now builds as users
// do and passes a change to vendor/ only when go mod vendor makes exactly
// it from the modules go.sum verifies.
func TestAttackVendoredFake(t *testing.T) {
	repo := nodetest.VendoredRepo(t)
	gate := "type: test\nrun: go test -json ./..."
	sum, a := nodetest.GateRun(t, repo, vendorFake, gate)
	nodetest.MustFail(t, sum, a, "vendor/ is not what go mod vendor makes", "vendor/github.com/google/uuid")

	// A checksum rewritten in go.sum is refused by line.
	rewrite := `sed -i 's|^github.com/google/uuid v1.6.0 h1:.*|github.com/google/uuid v1.6.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=|' go.sum`
	sum, a = nodetest.GateRun(t, repo, rewrite, gate)
	nodetest.MustFail(t, sum, a, "go.sum:1: github.com/google/uuid v1.6.0 has checksum h1:AAAA")
}

// TestVendorBuiltAsUsersBuild: the test gate compiles vendor/, as users'
// builds do (with -mod=mod it compiled the module cache and this fake,
// which breaks ID, went unnoticed); allow_vendor_patches lets a repository
// carry patches there and the verdict says so.
func TestVendorBuiltAsUsersBuild(t *testing.T) {
	repo := nodetest.VendoredRepo(t)
	broken := strings.Replace(vendorFake, nodetest.UUIDOfX, "not-the-uuid", 1)
	gate := "type: test\nrun: go test -json ./...\nallow_vendor_patches: true"
	sum, a := nodetest.GateRun(t, repo, broken, gate)
	nodetest.MustFail(t, sum, a, "TestID")

	sum, a = nodetest.GateRun(t, repo, vendorFake, gate)
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("a vendor patch the blueprint allows failed: %s\n%s", sum.Status, a.Feedback)
	}
	if v := string(nodetest.GateAttemptFile(t, sum, "verify.json")); !strings.Contains(v, `"allow_vendor_patches":true`) {
		t.Fatalf("the verdict does not record the opt-out: %s", v)
	}
	// An ordinary change beside vendor/ needs no regeneration and passes.
	sum, a = nodetest.GateRun(t, repo, "echo '// Sum is Add.' >> calc.go", "type: test\nrun: go test -json ./...")
	if sum.Status != runtime.StatusSucceeded {
		t.Fatalf("a fix beside vendor/ failed: %s\n%s", sum.Status, a.Feedback)
	}
}
