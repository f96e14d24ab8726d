package runfixture

import (
	"testing"

	"github.com/sandgate/sandgate/nodes"
)

// TestBlueprintsParse: what the tests are handed is a blueprint the
// built-in nodes accept, not YAML that fails only when a run starts.
func TestBlueprintsParse(t *testing.T) {
	for name, src := range map[string]string{
		"push":    PushBP("/tmp/remote.git"),
		"appends": AppendsBP("chain", "s.txt", []string{"a", "b", "c"}, map[string]string{"b": "sleep 1"}),
	} {
		if _, err := nodes.NewRegistry().Parse(name+".yaml", []byte(src)); err != nil {
			t.Errorf("%s: %v\n%s", name, err, src)
		}
	}
}
