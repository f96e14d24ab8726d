package main

import "testing"

// TestValidateNodeChecks: problems only a node type's own checks see
// (here an agent tool typo) are reported by validate at the field, with the
// source line, a caret and a suggestion, and make validate fail.
func TestValidateNodeChecks(t *testing.T) {
	f := "../../nodes/testdata/invalid/01-agent-tool-typo.yaml"
	code, out, errs := runCLI("validate", f)
	want := f + `:8:32: nodes.fix.tools[2]: unknown tool "ecit_file" (did you mean "edit_file"?)
        tools: [read_file, search, ecit_file, finish]
                                   ^
invalid: ` + f + ": 1 problem(s)\n"
	if code != exitUsage || out != "" || errs != want {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errs, want)
	}
}
