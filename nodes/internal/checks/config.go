package checks

import "github.com/sandgate/sandgate/blueprint"

// The configuration of each built-in node type, declared once: the tags
// drive validation, the JSON Schema and docs (blueprint.Configured), and
// factories receive the decoded, defaulted struct (blueprint.Decode). The
// Validate methods run when a blueprint loads (sandgate validate, and run
// before anything runs) and again in guard before a factory builds the
// node, so a configuration is refused at its field, with a caret, and never
// accepted by validation only to be refused by the factory.

// ShellConfig configures shell nodes.
type ShellConfig struct {
	Run blueprint.Command `sg:"run,required,notemplate" doc:"command line run by sh -c in the workspace (no templates), or {argv: [program, arg...]} run without a shell, whose items may name patterned inputs"`
}

// LintConfig configures lint nodes.
type LintConfig struct {
	Run []blueprint.Command `sg:"run,required,notemplate" doc:"one or more linter commands, each a shell command line (no templates) or {argv: [program, arg...]}"`
}

// DiffCapConfig configures diff_cap nodes. The caps are pointers so a cap
// written as zero is told from one left out.
type DiffCapConfig struct {
	MaxLines *int     `sg:"max_lines" doc:"lines added plus deleted; a line longer than 4 KiB counts once per 4 KiB begun"`
	MaxFiles *int     `sg:"max_files" doc:"files changed, binary files included"`
	MaxBytes *int     `sg:"max_bytes" doc:"bytes of added or modified files (apparent size) plus deleted files' size (default 1048576, 1 MiB; 0 turns the byte cap off)"`
	Exclude  []string `sg:"exclude,notemplate" doc:"paths not counted (lock files, generated code), in .gitignore's syntax but anchored at the repository's root: go.sum is the root's only, **/go.sum every go.sum, gen/ all under gen, !p counts p again"`
}

// DefaultMaxBytes is diff_cap's byte cap when a blueprint sets none: a
// line cap alone lets one enormous line through.
const DefaultMaxBytes = 1 << 20

// Validate refuses a diff_cap without a positive cap (it would pass any
// change) and a malformed exclude pattern.
func (c *DiffCapConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	for i, p := range c.Exclude {
		if _, err := parseExclude([]string{p}); err != nil {
			return []blueprint.Diagnostic{n.ErrorAt("exclude", i, "%v", err)}
		}
	}
	caps := []struct {
		key string
		v   *int
	}{{"max_lines", c.MaxLines}, {"max_files", c.MaxFiles}, {"max_bytes", c.MaxBytes}}
	for _, f := range caps {
		if f.v != nil && *f.v > 0 {
			return nil
		}
	}
	for _, f := range caps {
		if f.v != nil {
			return []blueprint.Diagnostic{n.ErrorAt(f.key, -1, "diff_cap needs a positive max_lines, max_files or max_bytes: a zero cap checks nothing")}
		}
	}
	return []blueprint.Diagnostic{n.ErrorAt("", -1, "diff_cap needs max_lines, max_files or max_bytes: without a cap it passes any change")}
}

// ProtectConfig configures protect nodes.
type ProtectConfig struct {
	Paths  []string `sg:"paths,required,notemplate" doc:"globs the agent must not change"`
	Action string   `sg:"action,enum=fail|revert,default=fail" doc:"fail or revert the changes"`
}

// ParityConfig configures parity nodes.
type ParityConfig struct {
	Tools     map[string]string `sg:"tools,notemplate" doc:"tool name to required version prefix, beside go.mod and .tool-versions"`
	Workflows string            `sg:"workflows,enum=auto|enforce|warn,default=auto" doc:"versions the GitHub Actions workflows set up: enforce fails on a mismatch, warn reports it in outputs.warnings; auto enforces when the blueprint has a sandbox.image (built to match CI) and warns on the host's root"`
}

// ApplyPatchConfig configures apply_patch nodes.
type ApplyPatchConfig struct {
	Patch   string `sg:"patch,required" doc:"the diff, usually a template over inputs or outputs"`
	Preview bool   `sg:"preview" doc:"write the diff for review instead of applying it"`
}

// deref is *p, or zero for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
