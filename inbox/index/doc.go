// Package index keeps every run of a set of runs directories in memory
// for the inbox's lists and `sandgate stats`: a refresh lists the
// directories, stats each run's journal and reads a run's files only when
// it is new or its journal changed, so a request reads no journal. Select
// searches (task, inputs, blueprint, repository, branch, status, reason,
// failing tests, labels), filters, sorts and pages the runs for a
// find.Query; ComputeStats aggregates them.
//
// It also holds what the inbox's pages share with the index: the fold of
// a journal into a View (attempts with their start times, answers,
// status), a run's liveness, and file reads that are safe on a runs
// directory others write (plain names only, through os.Root, regular
// files only, opened without blocking, capped).
//
// It imports runtime (the journal's events) and inbox/find, never inbox.
package index
