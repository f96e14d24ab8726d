package gate_test

import (
	"context"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

// BenchmarkParallelGates measures a parallel section on a real box: lint
// and tests after a fix (the shape of blueprints/parallel-gates.yaml), and
// a test gate beside a writer busy for a second. Gates hold the box
// exclusively, so what ran side by side now runs one after another; run
// with -benchtime=5x and compare against a build without the lock.
func BenchmarkParallelGates(b *testing.B) {
	shapes := map[string]string{
		"lint+test": `version: 1
name: par
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: [lint, test]}
  lint: {type: lint, run: ["gofmt -l .", "go vet ./..."], next: commit}
  test: {type: test, run: go test -count=1 -json ./..., next: commit}
  commit: {type: git_commit, needs: [lint, test], next: done}
  done: {type: succeed}
`,
		"writer+test": `version: 1
name: par
start: fix
nodes:
  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: [busy, test]}
  busy: {type: shell, run: "sleep 1", next: commit}
  test: {type: test, run: go test -count=1 -json ./..., next: commit}
  commit: {type: git_commit, needs: [busy, test], next: done}
  done: {type: succeed}
`,
	}
	for name, src := range shapes {
		b.Run(name, func(b *testing.B) {
			repo := nodetest.SeedRepo(b)
			h := nodetest.NewHarness(b, repo)
			bp, err := blueprint.Parse("par.yaml", []byte(src), blueprint.WithTypes(h.RT.Registry))
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				sum, err := h.RT.Run(ctx, bp, runtime.RunOptions{Workspace: repo})
				cancel()
				if err != nil || sum.Status != runtime.StatusSucceeded {
					b.Fatalf("run: %v %v", err, sum)
				}
			}
		})
	}
}
