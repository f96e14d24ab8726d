package sandbox

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Network modes.
const (
	NetworkNone      = "none"
	NetworkAllowlist = "allowlist"
)

// Policy is what a box allows.
type Policy struct {
	// Network is NetworkNone (only loopback inside the box) or
	// NetworkAllowlist (HTTP/HTTPS through the harness proxy to AllowHosts).
	Network    string
	AllowHosts []string
	// Env names host variables copied into the box; everything else is
	// built from nothing.
	Env []string
	// Isolation is "full" or "none".
	Isolation string
	// ReadOnly lists extra host paths made visible read-only at the same
	// path (a toolchain outside /usr, a module cache).
	ReadOnly []string
	// Caches are host cache directories (a Go build cache) shown in the
	// box copy-on-write: reads hit the host's cache, writes stay private,
	// so the box cannot poison the cache for later runs.
	Caches []Cache
	Limits Limits
	// RootFS, when set, is a host directory holding an image's unpacked
	// tree (see LeaseImage): the box shows its top-level directories
	// read-only as its own instead of the host's /usr, /opt, /bin and
	// /lib, and takes /etc's system entries (the dynamic linker's cache,
	// certificates) from it. The workspace, /tmp, the home directory,
	// /dev, /proc and the generated /etc files are the box's as always.
	RootFS string
	// RootEnv is the image configuration's environment: its PATH
	// replaces the box's, its other variables are set unless the box
	// sets them itself.
	RootEnv []string
}

// Cache is a host directory shown copy-on-write at Box, with Env set to
// Box in the command environment.
type Cache struct {
	Host string `json:"host"`
	// Lower are more host directories beneath Host, read-only like it:
	// the box sees the union of all of them (an entry in Host first),
	// and its writes land in its own layer above. A caller stacks caches
	// of different owners this way (a build cache the harness fills over
	// the user's own) without either being written. One that does not
	// exist is left out.
	Lower []string `json:"lower,omitempty"`
	Box   string   `json:"box"`
	Env   string   `json:"env,omitempty"`
}

// Limits bound what a box and its commands may use. Zero means default.
type Limits struct {
	// Timeout caps one command (default 10m).
	Timeout time.Duration
	// OutputBytes caps captured output per command (default 1 MiB); the
	// rest is counted and dropped.
	OutputBytes int
	// MemoryBytes caps the memory of the box's commands together (default
	// 4 GiB); init gets a little more on top, so they can never starve it.
	MemoryBytes int64
	// Pids caps the number of processes in the box (default 512).
	Pids int
	// DiskBytes caps what the box may write across /work, /tmp, the home
	// directory and the caches, together (default 4 GiB); going over fails
	// the writing command with ENOSPC.
	DiskBytes int64
}

// DefaultDiskBytes is the disk limit when the policy sets none.
const DefaultDiskBytes = 4 << 30

// FormatBytes writes a byte count in binary units: 4 GiB, 512 MiB.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && n%1024 == 0 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%d %s", n, units[i])
}

// parseSize reads a byte size as sandbox.disk spells it (512MiB,
// 4GiB). The blueprint package has its own reader, bounded for
// sandbox.disk; this one only serves the sandbox's environment settings,
// so the sandbox needs nothing of the blueprint.
func parseSize(s string) (int64, error) {
	units := []struct {
		name  string
		bytes int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.name)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 || num == "" || num[0] == '+' || num[0] == '-' {
			break
		}
		if n > (1<<62)/u.bytes {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return n * u.bytes, nil
	}
	return 0, fmt.Errorf("expected a size like 512MiB or 4GiB (units B, KiB, MiB, GiB, TiB), got %q", s)
}

// Paths inside the box.
const (
	WorkDir   = "/work"
	HomeDir   = "/home/sandbox"
	TmpDir    = "/tmp"
	ProxyAddr = "127.0.0.1:3128"
)

// basePath is the PATH inside the box; it names only read-only system
// directories.
const basePath = "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// BuildEnv returns the environment for commands in the box: a minimal set
// of variables plus the names the policy lets in, taken from host. Nothing
// else of the harness's environment (API keys, tokens) enters.
func BuildEnv(p Policy, host func(string) (string, bool)) []string {
	env := map[string]string{
		"PATH":    basePath,
		"HOME":    HomeDir,
		"TMPDIR":  TmpDir,
		"LANG":    "C.UTF-8",
		"USER":    "sandbox",
		"GOCACHE": TmpDir + "/go-build",
		"GOPATH":  HomeDir + "/go",
		// Go must not try to download toolchains or modules unless the
		// network policy allows it. No -mod is set: Go builds the way
		// the repository says, as on a user's clone (see goFlags).
		"GOTOOLCHAIN": "local",
	}
	if p.Network != NetworkAllowlist {
		env["GOPROXY"] = "off"
	} else {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
			env[k] = "http://" + ProxyAddr
		}
		env["NO_PROXY"], env["no_proxy"] = "localhost,127.0.0.1", "localhost,127.0.0.1"
	}
	if p.RootFS != "" {
		imageEnv(env, p.RootEnv)
	}
	for _, c := range p.Caches {
		if c.Env != "" {
			env[c.Env] = c.Box
		}
	}
	for _, k := range p.Env {
		if v, ok := host(k); ok {
			env[k] = v
		}
	}
	if v, ok := env["GOFLAGS"]; ok {
		env["GOFLAGS"] = goFlags(v)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// imageEnv adds an image's environment beneath the box's own: the
// image's PATH names its toolchain, so it wins; the box's variables
// (HOME, TMPDIR, the proxy, the Go settings) win over the rest.
func imageEnv(env map[string]string, image []string) {
	for _, kv := range image {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, set := env[k]; !set || k == "PATH" {
			env[k] = v
		}
	}
}

// goFlags drops -mod and -modfile from a GOFLAGS the policy lets in:
// the module mode is the repository's, as it is for a user's clone — Go
// builds from vendor/ when vendor/modules.txt exists (go 1.14 and
// later), in workspace mode when there is a go.work, and read-only
// otherwise. A host's -mod=mod would leave vendor/ uncompiled by every
// gate (users compile it), and fails every command in workspace mode.
// Every other flag (-tags, -buildvcs, ...) passes as given.
func goFlags(v string) string {
	var kept []string
	for _, f := range splitQuoted(v) {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if strings.HasPrefix(f, "-") && (name == "mod" || name == "modfile") {
			continue
		}
		kept = append(kept, f)
	}
	return strings.Join(kept, " ")
}

// splitQuoted splits GOFLAGS as the go command does: on blanks, except
// inside single or double quotes, which stay part of the field.
func splitQuoted(s string) []string {
	var fields []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote, in = r, true
			cur.WriteRune(r)
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if in {
				fields = append(fields, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		fields = append(fields, cur.String())
	}
	return fields
}

// ErrUnavailable is wrapped by every error that means a confinement layer
// could not be set up on this machine.
var ErrUnavailable = fmt.Errorf("sandbox unavailable")

// ErrMemoryHeldByFiles is a command's failure because files kept in
// memory (/dev/shm; a rootless box's whole disk) hold nearly all of the
// box's memory limit: the box can start no command until it is closed.
var ErrMemoryHeldByFiles = fmt.Errorf("box memory held by files")
