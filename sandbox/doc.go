// Package sandbox runs commands in a disposable, confined box: a workspace
// copy of the repository, no network unless an allowlist says so, an
// environment built from nothing, and a kill switch that does not depend on
// the code inside.
//
// A [Box] is one long-lived init process per run, started in new user,
// mount, PID, network, IPC and UTS namespaces, whose filesystem view is a
// fresh root holding read-only system directories, the workspace at /work
// and a private /tmp. After setting that up the init process locks itself
// down (no_new_privs, Landlock write rules, a seccomp filter) and then runs
// each command it is sent in a nested PID namespace, so that when a command
// ends or is killed, everything it started dies with it, daemons included.
// Closing the box kills its init process and with it the whole PID
// namespace.
//
// The confinement is applied in a re-executed copy of the harness binary,
// never in the harness itself. Programs that use this package must call
// [Main] at the very start of main (and tests in TestMain): it returns at
// once in the harness and never returns in a sandbox helper process.
//
// Nothing runs unconfined by accident: if a layer cannot be set up, starting
// the box fails with what is missing. Running without isolation takes an
// explicit Policy.Isolation of "none" and AllowUnconfined in the options.
package sandbox
