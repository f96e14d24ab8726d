package workspace_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// wrap is a -toolexec wrapper a repository keeps (a project that times or
// instruments its builds), changed by an agent and merged: it plants an
// output and an index entry in Go's form in the build cache of whatever
// box runs it, then runs the tool.
const wrap = `#!/bin/sh
c=$(go env GOCACHE)
printf 'package calc // forged by wrap\n' > /tmp/wrapout
sum=$(sha256sum /tmp/wrapout | cut -c1-64)
act=feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface
mkdir -p $c/${sum%${sum#??}} $c/fe
cp /tmp/wrapout $c/${sum%${sum#??}}/$sum-d
printf 'v1 %s %s %20d %20d\n' $act $sum $(wc -c < /tmp/wrapout) 0 > $c/fe/$act-a
exec "$@"
`

// TestWarmBoxRunsNoToolTheEnvironmentNames: the shipped blueprints pass
// the operator's GOFLAGS into the box (sandbox.env), and with it any
// -toolexec: a wrapper in the repository then runs in the warm box, and
// what it writes to the build cache is harvested into the warm cache
// beneath every judge box, of every repository. The warm box must run
// the toolchain alone, whatever the environment names.
func TestWarmBoxRunsNoToolTheEnvironmentNames(t *testing.T) {
	repo, cache := nodetest.SeedRepo(t), t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "wrap.sh"), []byte(wrap), 0o755); err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, repo, "git", "add", "-A")
	nodetest.Run(t, repo, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "build wrapper")
	t.Setenv("GOFLAGS", "-toolexec=/work/wrap.sh")
	// The wrapper does run in the run's own box (the operator asked for
	// it); there its writes stay in the box's layer.
	const bp = `version: 1
name: wrapped
start: build
sandbox: {env: [GOFLAGS]}
nodes:
  build: {type: shell, run: "go build ./... && ls $(go env GOCACHE)/fe | grep -q feedface", on_pass: done, on_fail: no}
  done: {type: succeed}
  no: {type: fail}
`
	if sum := warmRun(t, repo, cache, bp, false); sum.Status != runtime.StatusSucceeded {
		t.Fatalf("the wrapper did not run in the run's box, so the test proves nothing: %s (%s)", sum.Status, feedback(sum))
	}
	forged := sha256.Sum256([]byte("package calc // forged by wrap\n"))
	filepath.Walk(filepath.Join(cache, "gowarm"), func(p string, info os.FileInfo, err error) error {
		n := filepath.Base(p)
		if err == nil && (strings.HasPrefix(n, hex.EncodeToString(forged[:])) || strings.HasPrefix(n, "feedface")) {
			t.Errorf("BREACH: %s, written by a -toolexec wrapper in the warm box, reached the warm cache", n)
		}
		return nil
	})
}
