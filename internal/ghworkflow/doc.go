// Package ghworkflow reads a GitHub Actions workflow
// (.github/workflows/*.yml) for the toolchain CI runs in — a job's
// container image, or the versions it gives actions/setup-go,
// setup-node and setup-python — and proposes the sandbox.image that
// would give a box the same tools (`sandgate sandbox image propose`),
// and the versions the parity node compares with the box's.
//
// A workflow is untrusted text: it is parsed with yaml.v3 into nodes,
// only the fields read here are looked at, and a field of the wrong
// shape is an error naming file:line:col. Versions and image names are
// checked against a narrow grammar before they go into a proposal, so a
// proposal holds no text the workflow could use to smuggle anything; the
// caller still prints what it echoes from the workflow through termtext.
//
// The package imports nothing of sandgate's.
package ghworkflow
