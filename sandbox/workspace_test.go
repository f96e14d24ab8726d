//go:build linux

package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// makeRepo creates a small git repository with one commit.
func makeRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"README.md": "calc\n", "docs/a.txt": "a\n", "docs/b.txt": "b\n", "go.mod": "module calc\n\ngo 1.22\n"}
	for p, c := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// treeHash hashes every file, link and mode under dir, .git included.
func treeHash(t *testing.T, dir string) string {
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, _ := os.Lstat(p)
		h.Write([]byte(p + st.Mode().String()))
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		} else if st.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			h.Write([]byte(l))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readChange streams a change's content.
func readChange(t *testing.T, c sandbox.Change) string {
	t.Helper()
	r, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOverlayWorkspaceAndChanges(t *testing.T) { testWorkspace(t, false) }

// TestCopyWorkspaceAndChanges covers the fallback for kernels that refuse
// an overlay: the same attacks, the same change list.
func TestCopyWorkspaceAndChanges(t *testing.T) { testWorkspace(t, true) }

func testWorkspace(t *testing.T, noOverlay bool) {
	repo := makeRepo(t)
	before := treeHash(t, repo)
	cache := cacheDir(t)
	snap, commit, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(commit) != 40 {
		t.Fatalf("commit %q", commit)
	}
	snapBefore := treeHash(t, snap)
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: t.TempDir(), NoOverlay: noOverlay})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res := sh(t, b, `set -e
sed -i 's/a - b/a + b/' calc.go
echo new > new.txt
rm README.md
rm -r docs
mkdir -p docs && echo again > docs/c.txt
ln -s /etc/passwd link
git status --short >/dev/null
(echo x >> .git/config) 2>/dev/null && exit 9 || true
git log --oneline | wc -l`)
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Output)) != "1" {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	changes, err := sandbox.Changes(snap, b.Upper(), b.Merged())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		s := c.Path
		switch {
		case c.Deleted:
			s += " deleted"
		case c.Link != "":
			s += " -> " + c.Link
		default:
			body := strings.TrimSpace(readChange(t, c))
			s += " " + body[:min(3, len(body))]
		}
		got = append(got, s)
	}
	want := "README.md deleted|calc.go pac|docs/a.txt deleted|docs/b.txt deleted|docs/c.txt aga|link -> /etc/passwd|new.txt new"
	if strings.Join(got, "|") != want {
		t.Fatalf("changes:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	if treeHash(t, repo) != before {
		t.Error("BREACH: the user's repository changed")
	}
	if treeHash(t, snap) != snapBefore {
		t.Error("BREACH: the shared snapshot changed")
	}
	// The same commit reuses the cached snapshot.
	again, _, err := sandbox.Snapshot(context.Background(), repo, commit, cache)
	if err != nil || again != snap {
		t.Fatalf("snapshot not reused: %s vs %s (%v)", again, snap, err)
	}
}

// TestOverlayPathsWithCommas: overlay options are one comma-separated
// string; a snapshot, state directory or cache whose path holds a comma
// or colon must still work (it failed with ENOENT before).
func TestOverlayPathsWithCommas(t *testing.T) {
	base := filepath.Join(t.TempDir(), "a,b:c")
	snap, cache := filepath.Join(base, "snap"), filepath.Join(base, "go,cache")
	for _, d := range []string{snap, filepath.Join(cache, "00")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(snap, "f.txt"), []byte("base\n"), 0o644)
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: filepath.Join(base, "state,1"),
		Policy: sandbox.Policy{Caches: []sandbox.Cache{{Host: cache, Box: sandbox.HomeDir + "/.cache/c", Env: "XCACHE"}}}})
	if err != nil {
		t.Fatalf("start a box under %q: %v", base, err)
	}
	defer b.Close()
	res := sh(t, b, `cat /work/f.txt && echo changed > /work/f.txt && ls -d "$XCACHE/00" && touch "$XCACHE/new"`)
	if res.ExitCode != 0 {
		t.Fatalf("box under a comma path: %s", res.Output)
	}
	if b.Upper() == "" {
		t.Fatal("the box fell back to a copy instead of the overlay")
	}
}

// TestCacheLayers: a cache may stack read-only layers (a build cache the
// harness fills over the user's own). The box sees their union, the
// topmost first; its writes, into any first-level directory of any layer,
// land in the box's own layer, which CacheUpper names; no layer changes;
// a layer that does not exist is left out.
func TestCacheLayers(t *testing.T) {
	base := t.TempDir()
	top, under := filepath.Join(base, "harness"), filepath.Join(base, "user,cache")
	for _, d := range []string{filepath.Join(top, "aa"), filepath.Join(under, "aa"), filepath.Join(under, "bb")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(top, "aa", "x"), []byte("top\n"), 0o644)
	os.WriteFile(filepath.Join(under, "aa", "x"), []byte("under\n"), 0o644)
	os.WriteFile(filepath.Join(under, "bb", "y"), []byte("only under\n"), 0o644)
	snap := filepath.Join(base, "snap")
	os.MkdirAll(snap, 0o755)
	const in = sandbox.HomeDir + "/.cache/c"
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: filepath.Join(base, "state"),
		Policy: sandbox.Policy{Caches: []sandbox.Cache{{Host: top, Lower: []string{filepath.Join(base, "gone"), under}, Box: in, Env: "XCACHE"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res := sh(t, b, `cat "$XCACHE/aa/x" "$XCACHE/bb/y" && echo new > "$XCACHE/bb/z" && echo mine > "$XCACHE/aa/w"`)
	if res.ExitCode != 0 || string(res.Output) != "top\nonly under\n" {
		t.Fatalf("the stacked cache: exit %d %q", res.ExitCode, res.Output)
	}
	up := b.CacheUpper(in)
	if up == "" || b.CacheUpper("/elsewhere") != "" {
		t.Fatalf("CacheUpper(%s) = %q", in, up)
	}
	for p, want := range map[string]string{filepath.Join(up, "bb", "z"): "new\n", filepath.Join(up, "aa", "w"): "mine\n",
		filepath.Join(top, "aa", "x"): "top\n", filepath.Join(under, "aa", "x"): "under\n"} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", p, got, err, want)
		}
	}
	for _, p := range []string{filepath.Join(top, "bb"), filepath.Join(under, "bb", "z"), filepath.Join(top, "aa", "w")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the box wrote %s on the host", p)
		}
	}
	// A user's cache that does not exist (they never built) leaves the
	// layers beneath it: the box still sees them.
	b2, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: filepath.Join(base, "state2"),
		Policy: sandbox.Policy{Caches: []sandbox.Cache{{Host: filepath.Join(base, "never"), Lower: []string{under}, Box: in, Env: "XCACHE"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if res := sh(t, b2, `cat "$XCACHE/bb/y"`); res.ExitCode != 0 || string(res.Output) != "only under\n" || b2.CacheUpper(in) == "" {
		t.Fatalf("a cache whose top layer is missing: exit %d %q, layer %q", res.ExitCode, res.Output, b2.CacheUpper(in))
	}
}
