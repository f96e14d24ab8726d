package testgate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandgate/sandgate/nodes/internal/command"
	"github.com/sandgate/sandgate/nodes/internal/feedback"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/nodes/workspace"
	"github.com/sandgate/sandgate/sandbox"
)

// A user's go build compiles vendor/ whenever vendor/modules.txt exists
// (go 1.14 and later), so vendored code is code that ships, and the
// modules behind go.mod and go.sum are code that users' builds download.
// A change may touch them only as Go itself would: vendor/ must be what
// go mod vendor makes from modules that go.sum verifies, and no go.sum
// line may give a published module version a new checksum. The harness
// regenerates vendor/ in a fresh box built from the candidate
// (gate.FreshBox), whose module cache is the host's under a layer no
// command wrote: the agent's box may hold a module cache its commands
// rewrote to match a fake, and the judge box one the change's tests did.

// modRoots are the module roots whose modules the change touches.
type modRoots struct {
	// verify are the roots whose go.mod or go.sum changed: go mod verify.
	verify []string
	// vendor are the roots whose vendor/ must be regenerated: the change
	// touches vendor/ there, or go.mod or go.sum beside a vendor/.
	vendor []string
}

// touchedModules finds the module roots ("" for the repository's root)
// whose dependencies the change touches. A directory named vendor counts
// only directly below a module root (a go.mod, or the root's go.work):
// Go reads no other, and web assets often live in such directories.
func touchedModules(v *changeView, changes []sandbox.Change) modRoots {
	isRoot := func(dir string) bool {
		_, err := v.read(path.Join(dir, "go.mod"))
		if err != nil && dir == "" {
			_, err = v.read("go.work")
		}
		return err == nil
	}
	verify, vendor := map[string]bool{}, map[string]bool{}
	for _, c := range changes {
		dir, name := path.Split(c.Path)
		dir = strings.TrimSuffix(dir, "/")
		switch {
		case name == "go.mod" || name == "go.sum" || (dir == "" && name == "go.work"):
			if isRoot(dir) {
				verify[dir] = true
				if _, err := v.read(path.Join(dir, "vendor/modules.txt")); err == nil {
					vendor[dir] = true
				}
			}
		default:
			parts := strings.Split(c.Path, "/")
			for i, p := range parts[:len(parts)-1] {
				if root := strings.Join(parts[:i], "/"); p == "vendor" && isRoot(root) {
					vendor[root] = true
					break
				}
			}
		}
	}
	return modRoots{verify: slices.Sorted(maps.Keys(verify)), vendor: slices.Sorted(maps.Keys(vendor))}
}

// modScript checks the roots in the fresh box. Each failure prints a
// header line after \x1e; nothing is printed when all is well.
func modScript(r modRoots, workspaceMode bool, vendor bool) string {
	var b strings.Builder
	b.WriteString("rc=0\n")
	for _, dir := range r.verify {
		fmt.Fprintf(&b, "cd %s && { out=$(go mod verify 2>&1) || { printf '\\036%%s: go mod verify\\n%%s\\n' %s \"$out\"; rc=1; }; }\n",
			command.Quote(path.Join(sandbox.WorkDir, dir)), command.Quote(displayDir(dir)))
	}
	for i, dir := range r.vendor {
		if !vendor {
			break
		}
		gen := "go mod vendor"
		if workspaceMode {
			// A workspace vendors at its root; a module below it is
			// vendored as that module alone would be.
			gen = "GOWORK=off go mod vendor"
			if dir == "" {
				gen = "go work vendor"
			}
		}
		out := fmt.Sprintf("%s/sg-vendor-%d", sandbox.TmpDir, i)
		// Every name from the change reaches the shell quoted, as an
		// argument: a directory name must not be able to end the script.
		fmt.Fprintf(&b, `cd %[1]s && [ -e vendor ] && { if out=$(%[2]s -o %[3]s 2>&1); then out=$(diff -rq --no-dereference vendor %[3]s 2>&1) || { printf '\036%%s: vendor/ is not what %[2]s makes\n%%s\n' %[4]s "$out"; rc=1; }; else printf '\036%%s: %[2]s fails\n%%s\n' %[4]s "$out"; rc=1; fi; }
`, command.Quote(path.Join(sandbox.WorkDir, dir)), gen, out, command.Quote(displayDir(dir)))
	}
	b.WriteString("exit $rc\n")
	return b.String()
}

func displayDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// moduleChecks runs the checks of this file for a change; opted-out
// vendor patches are still verified through go.sum.
func (t *Test) moduleChecks(ctx context.Context, w *workspace.Workspace, v *changeView, changes []sandbox.Change, timeout time.Duration) ([]string, error) {
	out := goSumRewrites(v, changes)
	r := touchedModules(v, changes)
	if len(r.verify) == 0 && (len(r.vendor) == 0 || t.allowVendorPatches) {
		return out, nil
	}
	box, closeBox, err := gate.FreshBox(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("check the change's modules: %w", err)
	}
	defer closeBox()
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	_, werr := v.read("go.work")
	res, err := box.Exec(ctx, sandbox.Command{Args: []string{"sh", "-c", modScript(r, werr == nil, !t.allowVendorPatches)}, Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("check the change's modules: %w", err)
	}
	if res.ExitCode == 0 {
		return out, nil
	}
	text := string(res.Output)
	if res.TimedOut {
		return append(out, "checking the change's modules (go mod verify, go mod vendor) timed out"+feedback.TimedOut(true)), nil
	}
	for _, chunk := range strings.Split(text, "\x1e")[1:] {
		head, body, _ := strings.Cut(chunk, "\n")
		msg := head + ":\n" + feedback.Tail(strings.TrimSpace(body), 2048)
		if strings.Contains(head, "vendor") {
			msg += "\nUsers' builds compile vendor/: change dependencies with go get and go mod vendor, never by editing vendor/ (a test node may set allow_vendor_patches: true for a repository that carries patches there)."
		}
		if strings.Contains(body, "GOPROXY=off") || strings.Contains(body, "module lookup disabled") {
			msg += "\nThe box is offline and reads the host's module cache: a module go.mod needs is not there."
		}
		out = append(out, msg)
	}
	if len(out) == 0 {
		out = append(out, "checking the change's modules failed:\n"+feedback.Tail(text, 2048))
	}
	return out, nil
}

// goSumRewrites lists the go.sum lines of the change that give a module
// version the base's go.sum lists a different checksum: a published
// version never changes, so the new line names other code (a go.sum made
// to match a rewritten module cache).
func goSumRewrites(v *changeView, changes []sandbox.Change) []string {
	var out []string
	for _, c := range changes {
		if c.Deleted || path.Base(c.Path) != "go.sum" || !v.inBase(c.Path) {
			continue
		}
		base, err := readCapped(filepath.Join(v.snap, filepath.FromSlash(c.Path)))
		if err != nil {
			continue
		}
		data, err := v.read(c.Path)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: cannot be read to check its checksums: %v", c.Path, err))
			continue
		}
		old := map[string][]string{}
		eachSum(base, func(_ int, key, hash string) { old[key] = append(old[key], hash) })
		eachSum(data, func(line int, key, hash string) {
			if hs, ok := old[key]; ok && !slices.Contains(hs, hash) {
				out = append(out, fmt.Sprintf("%s:%d: %s has checksum %s, but the base's go.sum has %s: a published module version never changes, so this names other code",
					c.Path, line, key, hash, strings.Join(hs, ", ")))
			}
		})
	}
	return out
}

// eachSum calls f for each well-formed go.sum line: "path version hash",
// keyed by path and version (which ends in /go.mod for a go.mod's sum).
func eachSum(data []byte, f func(line int, key, hash string)) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 {
			f(n, fs[0]+" "+fs[1], fs[2])
		}
	}
}
