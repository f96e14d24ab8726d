package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
)

// TestHarvestTakesOnlyCheckedEntries: the copy into the warm cache takes
// outputs whose content hashes to their name and index entries in Go's
// form for the action they are named after, naming an output present at
// their size; nothing else.
func TestHarvestTakesOnlyCheckedEntries(t *testing.T) {
	up, dst, lower := t.TempDir(), t.TempDir(), t.TempDir()
	put := func(dir, rel, content string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	out := func(dir, content string) string {
		h := id(content)
		put(dir, h[:2]+"/"+h+"-d", content)
		return h
	}
	index := func(action, output string, size int) string {
		return fmt.Sprintf("v1 %s %s %20d %20d\n", action, output, size, 1700000000000000000)
	}
	good := out(up, "compiled archive")
	inLower := out(lower, "the user's own build")
	a1, a2, a3, a4, a5 := id("a1"), id("a2"), id("a3"), id("a4"), id("a5")
	put(up, a1[:2]+"/"+a1+"-a", index(a1, good, len("compiled archive")))        // kept
	put(up, a2[:2]+"/"+a2+"-a", index(a2, inLower, len("the user's own build"))) // kept: output beneath
	put(up, a3[:2]+"/"+a3+"-a", index(a3, id("absent"), 6))                      // output nowhere
	put(up, a4[:2]+"/"+a4+"-a", index(a1, good, len("compiled archive")))        // names another action
	put(up, a5[:2]+"/"+a5+"-a", index(a5, good, 3))                              // wrong size
	lie := id("what the name says")
	put(up, lie[:2]+"/"+lie+"-d", "other content") // content does not hash to its name
	moved := id("moved")
	put(up, "00/"+moved+"-d", "moved")  // in the wrong directory
	put(up, "trim.txt", "1700000000\n") // Go's own bookkeeping
	put(up, "README", "cache")
	link := id("link")
	os.Symlink("/etc/passwd", filepath.Join(up, link[:2], link+"-d"))
	n, _, err := harvest(up, dst, []string{dst, lower})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.Walk(dst, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dst, p)
			got = append(got, rel)
			if info.Mode().Perm() != 0o444 {
				t.Errorf("%s has mode %v, want read-only", rel, info.Mode())
			}
		}
		return nil
	})
	want := []string{good[:2] + "/" + good + "-d", a1[:2] + "/" + a1 + "-a", a2[:2] + "/" + a2 + "-a"}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) || n != 3 {
		t.Fatalf("harvested %d: %v\nwant %v", n, got, want)
	}
}

// TestWarmPackages: the run's packages input, split into arguments,
// flags left out; the blueprint's default; else every package.
func TestWarmPackages(t *testing.T) {
	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"packages": "./internal/a/... ./cmd/b"}, "[./internal/a/... ./cmd/b]"},
		{map[string]any{"packages": "-toolexec=/tmp/x ./a"}, "[./a]"},
		{map[string]any{"packages": "-exec"}, "[./...]"},
		{map[string]any{"packages": 3}, "[./...]"},
		{nil, "[./...]"},
	} {
		if got := fmt.Sprint(warmPackages(&blueprint.Blueprint{}, c.in)); got != c.want {
			t.Errorf("warmPackages(%v) = %s, want %s", c.in, got, c.want)
		}
	}
	bp := &blueprint.Blueprint{Inputs: map[string]*blueprint.Input{"packages": {Default: "./pkg/..."}}}
	if got := fmt.Sprint(warmPackages(bp, nil)); got != "[./pkg/...]" {
		t.Errorf("warmPackages with the blueprint's default = %s", got)
	}
}

// TestWarmEnv: the warm box sees only variables that choose what is
// built, and no GOFLAGS that could name a program.
func TestWarmEnv(t *testing.T) {
	for _, c := range []struct {
		goflags string
		want    string
		err     bool
	}{
		{"-tags=integration -trimpath", "[GOFLAGS GOEXPERIMENT]", false},
		{"", "[GOFLAGS GOEXPERIMENT]", false},
		{"-toolexec=/work/wrap.sh", "", true},
		{"-ldflags=-extld=/work/ld -linkmode=external", "", true},
		{"-gccgoflags=-fplugin=/work/p.so", "", true},
		{"--vettool=/work/vet", "", true},
		{"-tags='a b'", "", true},
		{"tags=x", "", true},
	} {
		lookup := func(n string) (string, bool) { return map[string]string{"GOFLAGS": c.goflags}[n], n == "GOFLAGS" }
		got, err := warmEnv([]string{"GOFLAGS", "CC", "PATH", "GOENV", "CGO_LDFLAGS", "PKG_CONFIG", "GOEXPERIMENT"}, lookup)
		if (err != nil) != c.err || (err == nil && fmt.Sprint(got) != c.want) {
			t.Errorf("warmEnv with GOFLAGS=%q = %v, %v; want %s (error %v)", c.goflags, got, err, c.want, c.err)
		}
	}
}
