// Package checks holds the simple built-in nodes: shell (a command in the
// box), apply_patch (a diff applied in the box, or proposed), and the
// gates lint, diff_cap, protect and parity. Each gate judges the change
// through gate.Begin and gate.Finish; the harness reads what it needs
// itself (the change list, the base blobs, the linters' own output) and
// trusts nothing a command in the box says about itself.
//
// Each type is declared by its XType function (spec and factory) and
// configured by its XConfig struct. It imports the workspace, gate,
// gitstore and the small internal helpers; it must never import another
// node package or the nodes facade.
package checks
