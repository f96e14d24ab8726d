package gocanary

import (
	goruntime "runtime"
	"testing"

	"github.com/sandgate/sandgate/internal/gocanary/gocanarytest"
)

// TestSelfReaderBeatsTheSeals records what the seals cannot stop: a
// binary that reads the tokens out of its own code passes the buggy
// TestAdd with its real token. The test-mode check on production code is
// what stops it (see testgate's tells and cmd's shipped-blueprint
// attack); if this test ever fails, the seals got stronger and the
// README's account of them should say so.
func TestSelfReaderBeatsTheSeals(t *testing.T) {
	if goruntime.GOARCH != "amd64" {
		t.Skip("the reader decodes amd64 instructions")
	}
	f := gocanarytest.SelfReader("calc")
	dir := module(t, buggy, map[string]string{f.File: f.Source})
	_, res, problems := run(t, dir, []string{"calc.go", f.File}, both)
	if got := results(res.Output); len(problems) > 0 || got["calc TestAdd"] != "pass" {
		t.Fatalf("the self reader no longer wins: problems %v, results %v", problems, got)
	}
}
