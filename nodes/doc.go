// Package nodes holds sandgate's built-in node types: the deterministic
// gates (shell, lint, test, diff_cap, protect, parity), the promotion steps
// (apply_patch, git_commit, git_push, review) and the agent node.
//
// Each type is declared once in [Specs]; the blueprint validator and the JSON
// Schema are generated from those declarations, so a key a type accepts is
// documented and checked in one place.
package nodes
