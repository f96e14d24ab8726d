package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemporalIsExternal: `run --temporal` and `worker` hand over to
// sandgate-temporal found on PATH, arguments and exit code intact, and
// say how to build it when it is missing.
func TestTemporalIsExternal(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	code, _, errs := runCLI("worker", "--temporal", "127.0.0.1:1")
	if code != exitUsage || !strings.Contains(errs, "sandgate-temporal not found") || !strings.Contains(errs, "go build") {
		t.Fatalf("missing binary: exit %d: %s", code, errs)
	}
	script := "#!/bin/sh\necho \"args: $*\"\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "sandgate-temporal"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("run", "bp.yaml", "--temporal=127.0.0.1:7233", "--repo", ".")
	if code != 3 || strings.TrimSpace(out) != "args: run bp.yaml --temporal=127.0.0.1:7233 --repo ." {
		t.Fatalf("exit %d, out %q, err %q", code, out, errs)
	}
	code, out, _ = runCLI("worker", "--max-runs", "2")
	if code != 3 || strings.TrimSpace(out) != "args: worker --max-runs 2" {
		t.Fatalf("worker: exit %d, out %q", code, out)
	}
}
