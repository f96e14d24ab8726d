//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Check reports which confinement layers work on this machine, by
// building real boxes (a bind-mounted one and an overlay one) and running
// a command in each.
func Check(ctx context.Context) []Layer {
	var out []Layer
	add := func(name string, ok bool, detail string) { out = append(out, Layer{name, ok, detail}) }
	n, _ := os.ReadFile("/proc/sys/user/max_user_namespaces")
	add("user namespaces", strings.TrimSpace(string(n)) != "0", "max_user_namespaces="+strings.TrimSpace(string(n)))
	abi := landlockABI()
	add("landlock", abi >= 1, fmt.Sprintf("ABI %d", abi))
	_, errV1 := os.Stat(filepath.Join(cgroupRoot, "pids"))
	_, errV2 := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers"))
	add("cgroups", errV1 == nil || errV2 == nil, fmt.Sprintf("v1 pids: %v, v2: %v", errV1 == nil, errV2 == nil))
	mode := Mode()
	add(mode.Name, mode.OK, mode.Detail)
	if rootless() {
		add("disk limit", true, "tmpfs mounted in a user namespace of the harness's (no loop device without root)")
	} else {
		add("disk limit", diskToolsPresent() == nil, fmt.Sprint(orOK(diskToolsPresent())))
	}

	tmp, err := os.MkdirTemp("", "sandgate-check-")
	if err != nil {
		add("temporary directory", false, err.Error())
		return out
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "ws")
	_ = os.MkdirAll(ws, 0o755)
	start := time.Now()
	b, err := Start(ctx, Options{Workspace: ws, StateDir: filepath.Join(tmp, "state")})
	if err != nil {
		add("confined box", false, err.Error())
		return out
	}
	res, err := b.Exec(ctx, Command{Args: []string{"true"}})
	b.Close()
	ok := err == nil && res.ExitCode == 0
	add("confined box", ok, fmt.Sprintf("started and ran a command in %s", time.Since(start).Round(time.Millisecond)))
	for _, l := range b.Layers() {
		add("  layer", true, l)
	}
	lower := filepath.Join(tmp, "lower")
	_ = os.MkdirAll(lower, 0o755)
	_ = os.WriteFile(filepath.Join(lower, "f"), []byte("x"), 0o644)
	ob, err := Start(ctx, Options{Snapshot: lower, StateDir: filepath.Join(tmp, "ostate")})
	if err != nil {
		add("overlay workspace", false, err.Error()+" (workspaces fall back to a copy)")
		return out
	}
	res, err = ob.Exec(ctx, Command{Args: []string{"sh", "-c", "echo y > f"}})
	ob.Close()
	add("overlay workspace", err == nil && res.ExitCode == 0, "copy-on-write over a read-only snapshot")
	return out
}
