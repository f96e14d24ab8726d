package sandbox_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestBuildEnvGoModuleMode: the box sets no module mode of its own, and a
// GOFLAGS the policy lets in loses -mod and -modfile (Go then builds from
// vendor/, in workspace mode or read-only, as on a user's clone) and keeps
// every other flag, quoted values whole.
func TestBuildEnvGoModuleMode(t *testing.T) {
	cases := []struct {
		name, host string
		let        bool
		want       string // GOFLAGS in the box; "-" for unset
	}{
		{"not let in", "-mod=mod", false, "-"},
		{"mod dropped", "-mod=mod", true, ""},
		{"modfile dropped, others kept", "-tags=integration --modfile=alt.mod -buildvcs=false --mod=vendor", true, "-tags=integration -buildvcs=false"},
		{"quoted value kept whole", `-ldflags="-X a=b -mod=mod" -mod=readonly -v`, true, `-ldflags="-X a=b -mod=mod" -v`},
		{"look-alike kept", "-modcacherw -mode=x", true, "-modcacherw -mode=x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p sandbox.Policy
			if c.let {
				p.Env = []string{"GOFLAGS"}
			}
			env := sandbox.BuildEnv(p, func(k string) (string, bool) {
				if k == "GOFLAGS" {
					return c.host, true
				}
				return "", false
			})
			got := "-"
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
					got = v
				}
				if strings.HasPrefix(kv, "GOWORK=") {
					t.Errorf("the box sets %s: workspace mode is the repository's", kv)
				}
			}
			if got != c.want {
				t.Fatalf("GOFLAGS in the box = %q, want %q", got, c.want)
			}
		})
	}
}
