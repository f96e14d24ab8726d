package nodes_test

import (
	"slices"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/github"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
)

// TestTrustedEndpointsAgree: the node types declare where their tokens
// may go without the operator's allowance (the loader checks blueprints
// against that), and the harness checks rendered URLs, redirects and
// queue entries against the same prefixes through gitremote and github.
// A declaration that drifted from them would let one path send a token
// where the other refuses it.
func TestTrustedEndpointsAgree(t *testing.T) {
	for _, c := range []struct {
		typ, field, want string
	}{
		{"git_push", "remote", gitremote.TrustedRemote},
		{"ci", "base_url", github.APIBase},
		{"review", "base_url", github.APIBase},
	} {
		f, ok := nodes.Types()[c.typ].Fields[c.field]
		if !ok || !f.Endpoint || !slices.Equal(f.Trusted, []string{c.want}) {
			t.Errorf("%s.%s: endpoint %v, trusted %q; the harness checks against %q", c.typ, c.field, f.Endpoint, f.Trusted, c.want)
		}
	}
}
