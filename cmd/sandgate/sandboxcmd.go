package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sandgate/sandgate/sandbox"
)

func cmdSandbox(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "delegate" {
		return cmdSandboxDelegate(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "image" {
		return cmdSandboxImage(args[1:], stdout, stderr)
	}
	fs := newFlags("sandbox", "check | delegate --user NAME | image propose [REPO]\n\nReports which isolation layers work on this machine (namespaces, Landlock,\nseccomp, cgroups, the disk limit), whether boxes are made as root or\nrootless, where the snapshot cache is and which sandbox.images it holds\nunpacked. Exit 1 when one is missing:\nsandgate then refuses to run commands.\n\nflags:", stdout, stderr)
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
		dir, len(list), len(stores), humanBytes(n), humanBytes(sandbox.CacheMax())) + imagesLine(dir)
}

// imagesLine lists the unpacked sandbox.images in the cache, newest
// first, with their sizes (capped apart from the snapshots).
func imagesLine(dir string) string {
	imgs, _ := sandbox.ListImages(dir)
	var total int64
	var b strings.Builder
	for k := len(imgs) - 1; k >= 0; k-- {
		i := imgs[k]
		total += i.Bytes
		use := ""
		if i.InUse {
			use = ", in use"
		}
		fmt.Fprintf(&b, "\n  %s  %s  (last used %s%s)", imageName(i), humanBytes(i.Bytes), i.LastUsed.Format("2006-01-02 15:04"), use)
	}
	return fmt.Sprintf("\nimage cache: %s (%d unpacked images, %s of %s)%s", filepath.Join(dir, "images"), len(imgs), humanBytes(total), humanBytes(sandbox.CacheMax()), b.String())
}

// cmdSandboxDelegate is `sandgate sandbox delegate --user NAME`: the one
// root step a machine without systemd needs before NAME can run boxes
// rootless (systemd's Delegate=yes does the same for a user session).
func cmdSandboxDelegate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sandbox delegate", "--user NAME\n\nAs root, hands the user NAME cgroup subtrees for the memory and pids\ncontrollers (v1 hierarchies, and v2 where it has them), so NAME's sandgate\nruns boxes rootless with those limits. Running it again changes nothing.\n\nflags:", stdout, stderr)
	name := fs.String("user", "", "the user (name or uid) to delegate to")
	if _, code, ok := fs.parseN(args, 0, 0); !ok {
		return code
	}
	if *name == "" {
		return fs.usageError("--user is required")
	}
	u, err := user.Lookup(*name)
	if err != nil {
		if u, err = user.LookupId(*name); err != nil {
			fmt.Fprintf(stderr, "sandgate sandbox delegate: no user %q\n", *name)
			return exitFailed
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dirs, err := sandbox.Delegate(uid, gid)
	if err != nil {
		fmt.Fprintln(stderr, "sandgate sandbox delegate:", err)
		return exitFailed
	}
	for _, d := range dirs {
		fmt.Fprintf(stdout, "delegated %s to %s\n", d, u.Username)
	}
	return exitOK
}
