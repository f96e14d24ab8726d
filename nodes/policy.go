package nodes

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/sandbox"
)

// SandboxPolicy turns a blueprint's sandbox section into a box policy.
// The mapping lives here, not in sandbox, so that the sandbox stays a
// standalone package that knows nothing of blueprints.
func SandboxPolicy(s blueprint.Sandbox) sandbox.Policy {
	return sandbox.Policy{Network: s.Network, AllowHosts: s.AllowHosts, Env: s.Env, Isolation: s.Isolation,
		Limits: sandbox.Limits{DiskBytes: s.Disk}}
}
