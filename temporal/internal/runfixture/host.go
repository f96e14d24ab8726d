package runfixture

import (
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
)

// Sandboxed is a temporal.Host's Prepare for the built-in nodes: each run
// gets a sandboxed workspace of its repository at its commit.
func Sandboxed(repo, rev string) runtime.Prepare {
	return nodes.Environment(nodes.EnvOptions{Repo: repo, Rev: rev})
}
