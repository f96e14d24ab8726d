package sandbox

import (
	"os"
)

// roleEnv marks a re-executed helper process and says which role it plays.
const roleEnv = "SANDGATE_SANDBOX_ROLE"

// Main runs the sandbox helper roles. Call it first in main (and in
// TestMain): in the harness it returns at once; in a helper process it runs
// the helper and exits.
func Main() {
	role := os.Getenv(roleEnv)
	if role == "" {
		return
	}
	os.Exit(runRole(role))
}
