package testgate

import (
	"path"
	"strings"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/sandbox"
)

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// TestConfig configures test nodes.
type TestConfig struct {
	Run                blueprint.Command `sg:"run,required,notemplate" doc:"test command: a shell command line (no templates) or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"`
	Format             string            `sg:"format,enum=auto|go-json|junit|tap,default=auto" doc:"report format"`
	Report             string            `sg:"report,notemplate" doc:"JUnit XML file the command writes under /tmp (a gate may not write in the workspace); removed before each run, so the command must write it anew"`
	RerunFailed        int               `sg:"rerun_failed" doc:"re-run failures up to N times to tell flaky from broken"`
	Hidden             string            `sg:"hidden,notemplate" doc:"directory of held-out tests, run in a throwaway box built from the change; never placed in the run's workspace"`
	HiddenFeedback     string            `sg:"hidden_feedback,enum=count|names,default=count" doc:"what the agent learns when held-out tests fail: count or names"`
	AllowNoTests       []string          `sg:"allow_no_tests,notemplate" doc:"Go packages (import paths, or a prefix ending in /...) allowed to have test files yet run no test; any other such package fails the gate"`
	AllowTestDetection bool              `sg:"allow_test_detection" doc:"let the change's non-test Go files detect the test binary (testing.Testing or testing.Init, test.* flag names, a .test binary name, writes to os.Args); by default such code fails the gate, as it could behave differently under test"`
	AllowVendorPatches bool              `sg:"allow_vendor_patches" doc:"accept a vendor/ that go mod vendor does not reproduce (a repository that carries patches there); by default a change touching vendor/ fails the gate unless go mod vendor, run in a fresh box from the modules go.sum verifies, makes exactly that vendor/. The verdict records the opt-out"`
	Canary             string            `sg:"canary,enum=on|off,default=on" doc:"for go test -json: seal every test of each package the change reaches (a pass must show a secret token) and add a failing and a passing canary test shaped like the package's own, compiled in with go test -overlay while none of the change's code runs and deleted, with held-out tests, before any test binary does; a report that breaks a seal or a canary was forged by the test binary. off for packages whose TestMain fails the package after passing tests (goleak.VerifyTestMain): with the canary failing, such post-checks do not run. For pytest with a report file: a failing and a passing test planted in each directory of test files the command collects, which the report must show as planted"`
}

// Validate refuses rerun_failed where the harness cannot re-run single
// tests (it re-runs failures with go test's -run), an unreadable hidden
// directory, and a report the gate would write in the workspace.
func (c *TestConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	if c.RerunFailed > 0 && c.Format != "go-json" && !command.Of(c.Run).IsGoTest() {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed needs go test -json (format: go-json): failures are re-run with go test -run")}
	}
	if c.Hidden != "" {
		if _, err := gate.HiddenFiles(c.Hidden); err != nil {
			return []blueprint.Diagnostic{n.ErrorAt("hidden", -1, "%v", err)}
		}
	}
	if c.Report == "" {
		return nil
	}
	if c.RerunFailed > 0 {
		return []blueprint.Diagnostic{n.ErrorAt("rerun_failed", -1, "rerun_failed reads go test -json output and cannot be combined with report: %s", c.Report)}
	}
	if _, ok := reportPath(c.Report); !ok {
		return []blueprint.Diagnostic{n.ErrorAt("report", -1, "%q must be a file under %s/: a gate may not write in the workspace it judges", c.Report, sandbox.TmpDir)}
	}
	return nil
}

// reportPath is a report's cleaned path, and whether it is a file in the
// box's scratch directory.
func reportPath(report string) (string, bool) {
	r := path.Clean(report)
	return r, strings.HasPrefix(r, sandbox.TmpDir+"/")
}
