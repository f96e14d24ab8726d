package promote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
)

func TestPromotionRefusesWithoutPassingVerdict(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	cases := map[string]string{
		"no gate ran": `  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: commit}`,
		"a gate failed": `  fix: {type: shell, run: "true", next: test}
  test: {type: test, run: go test -json ./..., next: commit}`,
		"changed after the gates": `  fix: {type: shell, run: "sed -i 's/a - b/a + b/' calc.go", next: test}
  test: {type: test, run: go test -json ./..., next: sneak}
  sneak: {type: shell, run: "echo 'func Evil() {}' >> calc.go", next: commit}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			src := "version: 1\nname: p\nstart: fix\nnodes:\n" + body + "\n  commit: {type: git_commit, next: done}\n  done: {type: succeed}\n"
			sum := nodetest.NewHarness(t, repo).Run(t, src, nil)
			if sum.Status != runtime.StatusHandedOff || !strings.Contains(sum.Reason, "asked for a person") {
				t.Fatalf("commit was not refused: %s (%s)", sum.Status, sum.Reason)
			}
			if _, err := os.Stat(filepath.Join(sum.Dir, "commit.json")); err == nil {
				t.Fatal("a commit was made")
			}
		})
	}
}
