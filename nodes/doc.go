// Package nodes assembles sandgate's built-in node types: the
// deterministic gates (shell, lint, test, diff_cap, protect, parity), the
// promotion steps (apply_patch, git_commit, git_push, ci, review) and the
// agent node, into a registry ([Register], [NewRegistryWith]), and gives
// each run the sandboxed workspace and services they need
// ([Environment]). It is the only package that knows every type, as an
// embedder's main package would.
//
// Each type is declared by the package that implements it (a spec and a
// factory) and collected in [Specs]; the blueprint validator and the JSON
// Schema are generated from those declarations, so a key a type accepts
// is documented and checked in one place. What library users import
// besides this package is small: nodes/workspace (the run's box and
// change), nodes/agent, nodes/reviewqueue, nodes/testreport and
// nodes/verdict. The types themselves live under nodes/internal, data
// flowing one way: box (workspace) → change → verdict (gate, checks,
// testgate) → commit → push (promote) → CI (ci) → review (review,
// reviewqueue).
//
// # Gates of your own
//
// Promotion (git_commit, git_push, review) reads nothing but the run's
// recorded verdicts: every gate node from which a promotion node can be
// reached must have a passing verdict on the change as it is now. A type an
// embedder registers becomes a gate by setting blueprint.NodeType.Gate; its
// node reports pass or fail through runtime.Result.Outcome, with Reason
// and optional Details. [Register] makes the registry run such nodes as it
// runs the built-in gates: with the box held exclusively, the change
// fingerprinted by the harness before the node starts and checked after it
// ends, the verdict recorded under the node's id in the run's verify.json
// (kind = the type name). A node cannot name the change it vouches for,
// and a gate whose workspace changed while it ran, that broke or panicked,
// or whose Details do not marshal to JSON is recorded as failed. See
// Example (customGate).
package nodes
