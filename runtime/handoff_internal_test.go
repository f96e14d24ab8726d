package runtime

import (
	"strings"
	"testing"
)

// TestDescribePatchQuotedNames: git quotes a file name holding control
// characters, quotes or backslashes in its diff headers; the hand-off
// still lists such a file (a file named to move the cursor was missing
// from the change's list).
func TestDescribePatchQuotedNames(t *testing.T) {
	patch := strings.Join([]string{
		"diff --git a/calc.go b/calc.go", "--- a/calc.go", "+++ b/calc.go",
		`diff --git "a/notes\033[2K\033[1A.txt" "b/notes\033[2K\033[1A.txt"`, "new file mode 100644",
		`diff --git "a/say \"hi\".bin" "b/say \"hi\".bin"`, "GIT binary patch",
		"diff --git a/with space.go b/with space.go", "",
	}, "\n")
	c := describePatch([]byte(patch))
	want := []string{"calc.go", "notes\x1b[2K\x1b[1A.txt", `say "hi".bin`, "with space.go"}
	if strings.Join(c.Files, "|") != strings.Join(want, "|") || len(c.Binary) != 1 || c.Binary[0] != `say "hi".bin` {
		t.Fatalf("files %q, binary %q", c.Files, c.Binary)
	}
}
