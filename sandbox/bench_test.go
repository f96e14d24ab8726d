//go:build linux

package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

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
}
