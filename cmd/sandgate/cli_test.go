package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes"
)

var update = flag.Bool("update", false, "rewrite golden files: blueprints/blueprint.schema.json, docs, testdata/")

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestShippedBlueprintsValidate validates every ready-to-use blueprint.
func TestShippedBlueprintsValidate(t *testing.T) {
	files, _ := filepath.Glob("../../blueprints/*.yaml")
	if len(files) == 0 {
		t.Fatal("no blueprints found")
	}
	for _, f := range files {
		code, out, errs := runCLI("validate", f)
		if code != exitOK || !strings.HasPrefix(out, "ok: ") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, errs)
		}
	}
}

// TestSchemaInSync keeps the shipped JSON Schema equal to the one generated
// from the Go type declarations.
func TestSchemaInSync(t *testing.T) {
	const path = "../../blueprints/blueprint.schema.json"
	want := blueprint.JSONSchema(nodes.Types())
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date: run go test ./cmd/sandgate -run TestSchemaInSync -update", path)
	}
}

func TestValidateInvalidExitsTwo(t *testing.T) {
	code, _, errs := runCLI("validate", "../../blueprint/testdata/invalid/14-edge-to-unknown-node.yaml")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	want := "14-edge-to-unknown-node.yaml:8:14: nodes.a.on_pass: unknown node \"dnoe\" (did you mean \"done\"?)"
	if !strings.Contains(errs, want) || !strings.Contains(errs, "                 ^") {
		t.Fatalf("stderr lacks positioned diagnostic with caret:\n%s", errs)
	}
}

func TestValidateJSON(t *testing.T) {
	code, out, _ := runCLI("validate", "../../blueprints/fix-failing-test.yaml", "../../blueprint/testdata/invalid/16-missing-on-fail.yaml", "--format", "json")
	if code != exitUsage {
		t.Fatalf("exit %d, want 2 when any file is invalid", code)
	}
	var got []validateSummary
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 2 || !got[0].Valid || got[1].Valid || got[1].Diagnostics[0].Line != 5 {
		t.Fatalf("unexpected summaries: %+v", got)
	}
}

func TestGraph(t *testing.T) {
	code, out, _ := runCLI("graph", "../../blueprints/fix-failing-test.yaml")
	if code != exitOK || !strings.Contains(out, `lint -.->|"fail, max 2"| implement`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("graph", "--format", "dot", "../../blueprints/fix-failing-test.yaml")
	if code != exitOK || !strings.Contains(out, "digraph") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"validate"}, {"graph"}, {"graph", "a", "b"}, {"validate", "--format", "xml", "x.yaml"}} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errs := runCLI("validate", "does-not-exist.yaml"); code != exitUsage || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: exit %d: %s", code, errs)
	}
}
