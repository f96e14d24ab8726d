//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// BenchmarkExecTrue compares running `true` in a live box with a bare
// fork/exec, a fresh unshare and bubblewrap (when installed).
func BenchmarkExecTrue(b *testing.B) {
	b.Run("bare-exec", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := exec.Command("/usr/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unshare", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := exec.Command("unshare", "-Urmpn", "-f", "/usr/bin/true").Run(); err != nil {
				b.Skip("unshare unavailable:", err)
			}
		}
	})
	if p, err := exec.LookPath("bwrap"); err == nil {
		b.Run("bwrap", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := exec.Command(p, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "/usr/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("sandgate-box", func(b *testing.B) {
		box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: b.TempDir(), StateDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer box.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := box.Exec(context.Background(), sandbox.Command{Args: []string{"/usr/bin/true"}})
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("sandgate-box-start", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: b.TempDir(), StateDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			box.Close()
		}
	})
	// One box's Start alone, its spare init and disk given time to be
	// ready (made and prepared) first, as when boxes do not follow each
	// other at once; Close and the wait are not timed.
	b.Run("sandgate-box-start-ready", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			ws, state := b.TempDir(), b.TempDir()
			time.Sleep(50 * time.Millisecond)
			b.StartTimer()
			box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: ws, StateDir: state})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			box.Close()
			b.StartTimer()
		}
	})
	// A resumed run's box: its disk image exists already.
	b.Run("sandgate-box-restart", func(b *testing.B) {
		state := b.TempDir()
		for i := 0; i < b.N; i++ {
			box, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: b.TempDir(), StateDir: state})
			if err != nil {
				b.Fatal(err)
			}
			box.Close()
		}
	})
}

// makeBenchRepo builds a committed repository of n small files in 100
// directories, once per size.
func makeBenchRepo(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "bench"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// benchSizes reads SANDGATE_BENCH_FILES (default 1000,10000).
func benchSizes() []int {
	s := os.Getenv("SANDGATE_BENCH_FILES")
	if s == "" {
		s = "1000,10000"
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		fmt.Sscan(f, &n)
		out = append(out, n)
	}
	return out
}

// BenchmarkWorkspace measures a workspace ready to run a command: a box
// over the cached snapshot versus git worktree add versus cp -r.
func BenchmarkWorkspace(b *testing.B) {
	for _, n := range benchSizes() {
		repo := makeBenchRepo(b, n)
		cache := b.TempDir()
		snap, _, err := sandbox.Snapshot(context.Background(), repo, "HEAD", cache)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d/sandgate-overlay", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				box, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if res, err := box.Exec(context.Background(), sandbox.Command{Args: []string{"true"}}); err != nil || res.ExitCode != 0 {
					b.Fatal(err)
				}
				box.Close()
			}
		})
		b.Run(fmt.Sprintf("files=%d/git-worktree-add", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				wt := filepath.Join(b.TempDir(), "wt")
				cmd := exec.Command("git", "worktree", "add", "-q", "--detach", wt, "HEAD")
				cmd.Dir = repo
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
				b.StopTimer()
				rm := exec.Command("git", "worktree", "remove", "--force", wt)
				rm.Dir = repo
				rm.Run()
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("files=%d/cp-r", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if out, err := exec.Command("cp", "-r", snap, filepath.Join(b.TempDir(), "copy")).CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
			}
		})
	}
}

// BenchmarkProxy compares fetching from a loopback server directly and
// through the allowlist proxy.
func BenchmarkProxy(b *testing.B) {
	payload := strings.Repeat("x", 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, payload) }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	sock := filepath.Join(b.TempDir(), "p.sock")
	p := &sandbox.Proxy{Allow: []string{fmt.Sprintf("bench.test:%d", port)}, PermitAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}}
	if err := p.Listen(sock); err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	proxied := &http.Client{Transport: &http.Transport{
		Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://sandgate-proxy") },
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	for name, c := range map[string]*http.Client{"direct": {}, "proxy": proxied} {
		target := srv.URL
		if name == "proxy" {
			target = fmt.Sprintf("http://bench.test:%d/", port)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			for i := 0; i < b.N; i++ {
				resp, err := c.Get(target)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
