// Package golden compares test output with a golden file, rewriting the
// file instead when the test runs with -update.
package golden

import (
	"os"
	"testing"
)

// Compare fails t when got differs from the golden file's content, or
// writes got to the file when update is set.
func Compare(t testing.TB, golden, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("missing golden file (run go test -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s\n--- got\n%s--- want\n%s", golden, got, want)
	}
}
