package nodetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileHolds: a word is found wherever it is, across the reader's
// chunk boundary too, and not where it is not.
func TestFileHolds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	word := "canary-4e1d"
	for _, at := range []int{0, 1<<20 - 5, 1 << 20, 3<<20 - len(word)} {
		body := []byte(strings.Repeat("x", 3<<20))
		copy(body[at:], word)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if !FileHolds(p, word) {
			t.Errorf("%q at %d not found", word, at)
		}
		if FileHolds(p, word+"!") {
			t.Errorf("%q found at %d though it is not there", word+"!", at)
		}
	}
	if FileHolds(filepath.Join(t.TempDir(), "missing"), word) {
		t.Error("a missing file holds the word")
	}
}
