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
// A box's workspace is usually a snapshot (see [LeaseSnapshot]): a
// read-only checkout of one commit, cached per commit under the cache
// directory and shared by every run, used as the overlay's lower layer.
// Snapshots borrow their git objects from one object store per
// repository, which the harness owns and fills from the user's
// repository without running anything there; the box sees the store
// read-only at /work/.git/objects. A snapshot of a new commit imports
// only the new objects and is a layer over the nearest cached snapshot's
// layers: the files that changed, whiteouts for those deleted and its
// own .git, so it costs what changed. A box stacks the layers as its
// overlay's lower layers; the harness reads a layered snapshot through a
// read-only overlay of them (its view, which its lease mounts).
// [EvictSnapshots] keeps the cache under its cap; leased snapshots, the
// snapshots a cached layer stacks on, and their stores stay.
//
// A box's init and its disk (an ext4 image of the disk limit's size) are
// made ahead: each Start takes an init already started in its namespaces
// and cgroups and waiting for its setup, and a disk already mounted, and
// leaves one of each for the next box (see zygote_linux.go). An init
// serves one box: everything that confines it happens after the take.
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
