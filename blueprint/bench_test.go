package blueprint_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// bigBlueprint generates n nodes: a chain with a bounded retry edge every
// ten nodes and a condition on every node.
func bigBlueprint(n int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nname: big\ninputs:\n  task: {required: true}\nstart: n0\nnodes:\n")
	for i := 0; i < n; i++ {
		next := fmt.Sprintf("n%d", i+1)
		if i == n-1 {
			next = "done"
		}
		back := fmt.Sprintf("n%d", i-i%10)
		fmt.Fprintf(&b, "  n%d:\n    type: shell\n    run: echo %d\n    edges:\n      - {to: %s, when: \"outputs.n%d.exit_code == 0 && inputs.task != ''\"}\n      - {to: %s, max: 2}\n",
			i, i, next, i, back)
	}
	b.WriteString("  done: {type: succeed}\n")
	return []byte(b.String())
}

func BenchmarkValidate1000Nodes(b *testing.B) {
	src := bigBlueprint(1000)
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		if _, err := blueprint.Parse("big.yaml", src, blueprint.WithTypes(testTypes)); err != nil {
			b.Fatal(err)
		}
	}
}
