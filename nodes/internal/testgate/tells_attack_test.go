package testgate_test

import (
	"testing"

	"github.com/sandgate/sandgate/internal/cheats"
	"github.com/sandgate/sandgate/internal/gitfixture"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// callerLog is reviewed base code that inspects its stack for logging.
const callerLog = `package calc

import "runtime"

// where names the caller, for log lines.
func where() string {
	_, file, line, _ := runtime.Caller(1)
	return file + ":" + string(rune('0'+line%10))
}
`

// TestAttackStackSniff: the sniffing Add passed every test and the gate;
// the typed scan now names it at file:line. Reviewed base code that
// inspects the stack stays acceptable in an edited file, until the change
// alters the declaration that does it.
func TestAttackStackSniff(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	if err := gitfixture.Write(repo, map[string]string{"where.go": callerLog}); err != nil {
		t.Fatal(err)
	}
	if err := gitfixture.Commit(repo, "d", "log helper"); err != nil {
		t.Fatal(err)
	}
	gate := "type: test\nrun: go test -json ./..."
	sum, a := nodetest.GateRun(t, repo, writeFiles(map[string]string{"calc.go": cheats.StackSniffAdd}), gate)
	nodetest.MustFail(t, sum, a, "calc.go:11: production code detects the test binary (stack inspection: runtime.CallersFrames)", "calc.go:11: production code detects the test binary (stack inspection: runtime.Callers)")

	edited := fixAdd + " && printf '\\n// Version is the log format.\\nconst Version = 2\\n' >> where.go"
	sum, a = nodetest.GateRun(t, repo, edited, gate)
	mustPass(t, sum, a)

	altered := fixAdd + " && sed -i 's/runtime.Caller(1)/runtime.Caller(2)/' where.go"
	sum, a = nodetest.GateRun(t, repo, altered, gate)
	nodetest.MustFail(t, sum, a, "where.go:7: production code detects the test binary (stack inspection: runtime.Caller)")
}
