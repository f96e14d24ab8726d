package review_test

import (
	"os"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary serve as the box's init (sandbox.Main),
// and as the process review_restart_test kills while its review waits.
func TestMain(m *testing.M) {
	sandbox.Main()
	if spec := os.Getenv("SANDGATE_REVIEW_CHILD"); spec != "" {
		reviewChild(spec) // waits in a review until killed
	}
	os.Exit(m.Run())
}
