package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sandgate/sandgate/sandbox"
)

func cmdSandbox(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sandbox", "check\n\nReports which isolation layers work on this machine (namespaces, Landlock,\nseccomp, cgroups, the disk limit) and where the snapshot cache is. Exit 1\nwhen one is missing: sandgate then refuses to run commands.\n\nflags:", stdout, stderr)
	format := fs.format("text", "json")
	pos, code, ok := fs.parseN(args, 1, 1)
	if !ok {
		return code
	}
	if pos[0] != "check" {
		return fs.usageError(fmt.Sprintf("unknown sandbox command %q", pos[0]))
	}
	layers := sandbox.Check(context.Background())
	ok = true
	for _, l := range layers {
		ok = ok && l.OK
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(layers, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		for _, l := range layers {
			mark := "ok  "
			if !l.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(stdout, "%s %-20s %s\n", mark, l.Name, l.Detail)
		}
		fmt.Fprintln(stdout, cacheLine())
		if ok {
			fmt.Fprintln(stdout, "\nevery layer works: runs are confined.")
		} else {
			fmt.Fprintln(stdout, "\nsome layers are missing: sandgate refuses to run commands until they work (or a blueprint opts out with isolation: none and --allow-unsandboxed).")
		}
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}

// cacheLine tells where the shared snapshots live and how full the cache
// is, counted as its cap counts it (sandbox.CacheBytes: the object stores
// and the snapshots' own files, each once).
func cacheLine() string {
	dir := sandbox.DefaultCacheDir()
	list, _ := sandbox.ListSnapshots(dir)
	stores, _ := sandbox.ListStores(dir)
	n, _ := sandbox.CacheBytes(dir)
	return fmt.Sprintf("\nsnapshot cache: %s (%d snapshots of %d repositories, %s of %s; SANDGATE_CACHE_MAX sets the cap, sandgate prune empties it)",
		dir, len(list), len(stores), humanBytes(n), humanBytes(sandbox.CacheMax()))
}
