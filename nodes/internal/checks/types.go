package checks

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/runtime"
)

// Shorthands keep the declarations readable.
const (
	kStr  = blueprint.KindString
	kInt  = blueprint.KindInt
	kList = blueprint.KindStringList
)

// ShellType declares shell nodes: a command in the sandbox, no gate.
func ShellType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[ShellConfig](blueprint.NodeType{Name: "shell", Stage: "verify", Doc: "runs a command in the sandbox; passes on exit code 0",
		Outputs: map[string]blueprint.Kind{"exit_code": kInt, "output": kStr}}), New: newShell}
}

// LintType declares the lint gate.
func LintType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[LintConfig](blueprint.NodeType{Name: "lint", Stage: "verify", Gate: true, Doc: "runs linters and parses file:line:col diagnostics",
		Outputs: map[string]blueprint.Kind{"diagnostics": kInt, "files": kList}}), New: gate.Quietly(newLint, true)}
}

// DiffCapType declares the diff_cap gate.
func DiffCapType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[DiffCapConfig](blueprint.NodeType{Name: "diff_cap", Stage: "verify", Gate: true, Doc: "fails when the change against the base commit is too large",
		Outputs: map[string]blueprint.Kind{"lines": kInt, "added": kInt, "deleted": kInt, "files": kInt, "bytes": kInt, "binary": kInt, "ignored": kInt, "excluded": kInt}}), New: gate.Quietly(newDiffCap, true)}
}

// ProtectType declares the protect gate.
func ProtectType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[ProtectConfig](blueprint.NodeType{Name: "protect", Stage: "verify", Gate: true, Doc: "fails (or reverts) when protected paths changed",
		Outputs: map[string]blueprint.Kind{"changed": kList}}), New: gate.Quietly(newProtect, true)}
}

// ParityType declares the parity gate.
func ParityType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[ParityConfig](blueprint.NodeType{Name: "parity", Stage: "verify", Gate: true, Doc: "checks sandbox tool versions against what the repo pins",
		Outputs: map[string]blueprint.Kind{"mismatches": kList, "warnings": kList}}), New: gate.Quietly(newParity, true)}
}

// ApplyPatchType declares apply_patch nodes, which propose rather than
// judge.
func ApplyPatchType() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[ApplyPatchConfig](blueprint.NodeType{Name: "apply_patch", Stage: "propose", Doc: "applies a unified diff to the workspace",
		Outputs: map[string]blueprint.Kind{"files": kInt}}), New: newApplyPatch}
}
