package workspace

import (
	"os/exec"
	"sort"
	"strings"

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

// GoCaches returns the host's Go build and module caches as copy-on-write
// caches for the box, so builds in the box start warm without being able
// to poison the host's caches.
func GoCaches() []sandbox.Cache {
	var out []sandbox.Cache
	for env, box := range map[string]string{"GOCACHE": sandbox.HomeDir + "/.cache/go-build", "GOMODCACHE": sandbox.HomeDir + "/go/pkg/mod"} {
		b, err := exec.Command("go", "env", env).Output()
		if p := strings.TrimSpace(string(b)); err == nil && p != "" && p != "off" {
			out = append(out, sandbox.Cache{Host: p, Box: box, Env: env})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Env < out[j].Env })
	return out
}
