package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAnswerChildOutput: the inbox's answer action keeps what the
// `sandgate answer` child prints, on both streams at once. Under -race
// this fails if the two streams' copies write one buffer side by side,
// and the kept output must stay within its 64 KiB.
func TestServeAnswerChildOutput(t *testing.T) {
	script := filepath.Join(t.TempDir(), "sandgate")
	body := "#!/bin/sh\nfor i in $(seq 1 3000); do echo out-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; echo err-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxx >&2; done\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	old := os.Args[0]
	os.Args[0] = script
	defer func() { os.Args[0] = old }()
	err := cliActions{stderr: io.Discard}.Answer(context.Background(), t.TempDir(), "implement", "a note", "ana")
	if err == nil || !strings.Contains(err.Error(), "out-1-") {
		t.Fatalf("the child's failure: %v", err)
	}
	if n := len(err.Error()); n > 70<<10 {
		t.Errorf("the error keeps %d bytes of child output, want at most 64 KiB", n)
	}
}

// TestServeDecideIDIsNoFlag: a queue entry directory named like a flag
// must not reach the child's command line, where "-allow-endpoint" would
// take "--note" as its value and the note would become the entry to decide.
func TestServeDecideIDIsNoFlag(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	script := filepath.Join(dir, "sandgate")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+argv+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := os.Args[0]
	os.Args[0] = script
	defer func() { os.Args[0] = old }()
	err := cliActions{stderr: io.Discard}.Decide(context.Background(), dir, "-allow-endpoint", true, "victim-entry", "ana")
	if b, rerr := os.ReadFile(argv); rerr == nil {
		t.Fatalf("the child ran with %q (err %v)", b, err)
	}
	if err == nil {
		t.Fatal("deciding an entry named like a flag succeeded")
	}
}
