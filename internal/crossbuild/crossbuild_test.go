package crossbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildsOffLinux cross-compiles the whole module for macOS and
// Windows, where validate, graph, schema, show, runs and serve work and
// what needs Linux (a box, a flock) fails at the call.
func TestBuildsOffLinux(t *testing.T) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	mod := strings.TrimSpace(string(root))
	if err != nil || mod == "" || mod == os.DevNull {
		t.Fatalf("go env GOMOD: %v %q", err, root)
	}
	for _, goos := range []string{"darwin", "windows"} {
		cmd := exec.Command("go", "build", "./...")
		cmd.Dir = filepath.Dir(mod)
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOOS=%s go build ./...: %v\n%s", goos, err, out)
		}
	}
}
