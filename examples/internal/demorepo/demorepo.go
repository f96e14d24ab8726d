// Package demorepo creates the small repository the examples work on: a Go
// module whose Add subtracts, with a test that catches it.
package demorepo

import (
	"os"

	"github.com/sandgate/sandgate/internal/gitfixture"
)

// Create writes the repository into a new temporary directory, commits it
// and returns its path.
func Create() (string, error) {
	dir, err := os.MkdirTemp("", "sandgate-example-")
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n",
	}
	if err := gitfixture.Seed(dir, files, "calc"); err != nil {
		return "", err
	}
	return dir, nil
}
