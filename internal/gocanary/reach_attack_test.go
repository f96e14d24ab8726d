package gocanary

import "testing"

// TestAttackReachAroundTheImportGraph: changes that put their code into a
// package's test binary without showing in the import graph the plan
// reads must still reach it.
//   - A package directory made a symlink to a new one: the tree lists no
//     package there (links are not followed), so an import of it resolved
//     to nothing, and its importers went unsealed with the new code in
//     their binaries.
//   - A C header outside a cgo package's directory (#include "../inc/x.h"):
//     the header belongs to the root package by its path, and the cgo
//     package that compiles it was not reached; a constructor in the
//     header prints what it likes before any test runs.
func TestAttackReachAroundTheImportGraph(t *testing.T) {
	tree := mapTree{
		"go.mod":         "module example.com/m\n",
		"m.go":           "package m\n",
		"evil/h.go":      "package helper\n\nfunc init() { println(\"forged\") }\n",
		"a/a_test.go":    "package a\n\nimport (\n\t\"testing\"\n\n\t_ \"example.com/m/helper\"\n)\n\nfunc TestA(t *testing.T) {}\n",
		"inc/x.h":        "__attribute__((constructor)) static void forge(void) {}\n",
		"cg/cg.go":       "package cg\n\n// #include \"../inc/x.h\"\nimport \"C\"\n",
		"cg/cg_test.go":  "package cg\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n",
		"lone/l.go":      "package lone\n",
		"lone/l_test.go": "package lone\n\nimport \"testing\"\n\nfunc TestL(t *testing.T) {}\n",
	}
	for _, c := range []struct {
		changed []string
		want    string
	}{
		{[]string{"evil/h.go", "helper", "helper/h.go"}, "a"},
		{[]string{"inc/x.h"}, "cg"},
	} {
		dirs, all := Affected(tree, c.changed)
		if !all && !dirs[c.want] {
			t.Errorf("change %v: %s holds the change's code but is not reached (reached %v)", c.changed, c.want, dirs)
		}
	}
	if dirs, _ := Affected(tree, []string{"lone/l.go"}); !dirs["a"] || !dirs["cg"] {
		t.Errorf("a change to lone: reached %v, want a (an import of it the tree cannot place) and cg (it may include any file)", dirs)
	}
}
