package gitstore

import (
	"os"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary serve as the box's init (sandbox.Main):
// a layer is checked as a box mounts it.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
