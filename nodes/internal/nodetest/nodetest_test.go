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

// TestFileHoldsSparse: in a sparse file a word is found in every data
// extent, before and after holes, and a word with a NUL byte is looked
// for in the holes too.
func TestFileHoldsSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	words := map[string]int64{"first-4e1d": 0, "middle-9a0c": 20 << 20, "last-77b2": 64<<20 - 9}
	for w, at := range words {
		if _, err := f.WriteAt([]byte(w), at); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	for w := range words {
		if !FileHolds(p, w) {
			t.Errorf("%q not found", w)
		}
	}
	if FileHolds(p, "absent-1111") {
		t.Error("a word that is not there was found")
	}
	if !FileHolds(p, "\x00\x00\x00\x00") {
		t.Error("zeros in a hole not found")
	}
}
