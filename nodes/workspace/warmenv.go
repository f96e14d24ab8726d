package workspace

import (
	"fmt"
	"strings"
)

// What of the box's environment reaches the warm box. The warm cache is
// trusted because the toolchain alone runs there; the environment can
// name other programs — GOFLAGS's -toolexec, -vettool, -ldflags=-extld,
// -gccgoflags=-fplugin; CC, CGO_LDFLAGS, PKG_CONFIG, GOENV, PATH — and a
// program the operator names may be a file of the repository (a build
// wrapper an agent changed and a human merged). So the warm box gets
// only settings that choose what the toolchain builds, never what runs:
// anything else sandbox.env names is left out (its entries are then not
// the ones a box with it looks up, which only costs a cache miss), and a
// GOFLAGS with a flag not known to be safe skips the warm step.

// warmEnvNames are the variables sandbox.env may pass into the warm box.
var warmEnvNames = map[string]bool{
	"GOFLAGS": true, "GOEXPERIMENT": true, "CGO_ENABLED": true, "GOOS": true, "GOARCH": true,
	"GOAMD64": true, "GOARM": true, "GOARM64": true, "GO386": true, "GOPPC64": true,
	"GORISCV64": true, "GOMIPS": true, "GOMIPS64": true, "GOWASM": true,
}

// warmFlags are the GOFLAGS flags that select what is built and run no
// program of their own (-mod and -modfile the box drops anyway).
var warmFlags = map[string]bool{
	"tags": true, "trimpath": true, "buildvcs": true, "race": true, "msan": true, "asan": true,
	"cover": true, "covermode": true, "coverpkg": true, "p": true, "v": true, "x": true,
	"mod": true, "modfile": true,
}

// warmEnv is names, the variables sandbox.env passes into the box, less
// those the warm box may not see; lookup reads their values as the box
// will. An unsafe GOFLAGS is an error: the warm step does not run.
func warmEnv(names []string, lookup func(string) (string, bool)) ([]string, error) {
	var out []string
	for _, n := range names {
		if !warmEnvNames[n] {
			continue
		}
		if v, ok := lookup(n); ok && n == "GOFLAGS" {
			if bad := unsafeFlag(v); bad != "" {
				return nil, fmt.Errorf("GOFLAGS passes %s, which may run a program of the repository's: no warm step runs with it", bad)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// unsafeFlag is the first field of a GOFLAGS value that is not a flag in
// warmFlags, or "". A quoted value splits into fields that are not flags,
// so it is refused too.
func unsafeFlag(v string) string {
	for _, f := range strings.Fields(v) {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-"), "=")
		if !strings.HasPrefix(f, "-") || !warmFlags[name] {
			return f
		}
	}
	return ""
}
