package credential_test

import (
	"os"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestMain lets the test binary serve as the box's init (sandbox.Main).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
