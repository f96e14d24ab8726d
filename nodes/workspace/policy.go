package workspace

import (
	"os/exec"
	"path/filepath"
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
// to poison the host's caches. The checksum database's state (the signed
// tree head Go last verified, in GOPATH/pkg/sumdb) comes along: the
// module cache holds the database's records and tiles, but without the
// tree head an offline box cannot check a checksum that no go.sum lists,
// as for a workspace's modules when go.work.sum is not committed
// (prometheus: go list -m all failed in the box and passed on the host).
func GoCaches() []sandbox.Cache {
	b, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	vals := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if err != nil || len(vals) != 3 {
		return nil
	}
	var out []sandbox.Cache
	caches := [...]struct{ env, box string }{{"GOCACHE", sandbox.HomeDir + "/.cache/go-build"}, {"GOMODCACHE", sandbox.HomeDir + "/go/pkg/mod"}}
	for i, c := range caches {
		if p := strings.TrimSpace(vals[i]); p != "" && p != "off" {
			out = append(out, sandbox.Cache{Host: p, Box: c.box, Env: c.env})
		}
	}
	// The box's GOPATH is its home's go; the host's first GOPATH entry
	// holds the state Go reads. The database's own directory is the
	// cache, so its tree head is a top-level file the commands may
	// rewrite (their copy).
	if gopath := filepath.SplitList(strings.TrimSpace(vals[2])); len(gopath) > 0 && gopath[0] != "" {
		out = append(out, sandbox.Cache{Host: filepath.Join(gopath[0], "pkg", "sumdb", "sum.golang.org"), Box: sandbox.HomeDir + "/go/pkg/sumdb/sum.golang.org"})
	}
	return out
}
