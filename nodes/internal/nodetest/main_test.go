package nodetest

import (
	"os"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary serve as the box's init (sandbox.Main):
// the helpers' own tests run gates in boxes.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
