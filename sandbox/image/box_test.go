//go:build linux

package image_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/sandbox/image"
	"github.com/sandgate/sandgate/sandbox/image/imagetest"
)

// TestImageBoxRunsTheImagesTools: a box on an image runs the image's
// uname (not the host's), finds its tools on the image's PATH, sees
// none of the host's /usr, cannot write the image, and does not see a
// host directory the image's /etc links to.
func TestImageBoxRunsTheImagesTools(t *testing.T) {
	tool := imagetest.BuildTool(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, "certs"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "certs", "host-secret")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := func(name string) ent { return ent{name: name, body: string(tool), typ: '0', mode: 0o755} }
	l := layerOf(t, dir("usr"), dir("usr/bin"), exe("usr/bin/uname"), dir("opt"), dir("opt/imgbin"), exe("opt/imgbin/imgtool"),
		symlink("bin", "usr/bin"), dir("etc"), symlink("etc/ssl", outside), file("etc/os-release", "ID=sandgate-test\n"))
	p := layoutOf(t, imageOf(t, []string{"PATH=/opt/imgbin:/usr/bin:/bin"}, l), "t")
	lease, err := image.Lease(context.Background(), t.TempDir(), "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
		Policy: sandbox.Policy{RootFS: lease.RootFS, RootEnv: lease.Env}})
	if err != nil {
		t.Fatalf("start a box on the image: %v", err)
	}
	defer b.Close()
	run := func(args ...string) string {
		res, err := b.Exec(context.Background(), sandbox.Command{Args: args, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(res.Output)
	}
	host, _ := exec.Command("uname", "--version").Output()
	got := run("uname", "--version")
	if !strings.Contains(got, "sandgate test image") || got == string(host) {
		t.Fatalf("uname in the box says %q; the host's says %q", got, host)
	}
	t.Logf("box: %q, host: %q", strings.TrimSpace(got), strings.SplitN(string(host), "\n", 2)[0])
	out := run("imgtool", "probe", "/usr/bin/git", "/usr/bin/env", "/etc/ssl/certs/host-secret", secret, "/etc/os-release")
	for _, bad := range []string{"wrote", "/usr/bin/git", "/usr/bin/env", "host-secret"} {
		if strings.Contains(out, bad) {
			t.Errorf("the box could do what it must not (%q):\n%s", bad, out)
		}
	}
	for _, want := range []string{"read /etc/os-release", "workspace writable", "PATH=/opt/imgbin:/usr/bin:/bin"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	t.Logf("layers: %v", b.Layers())
}

// TestImageBoxFailsClosed: a box asked for an image root that is not
// there does not start (it never falls back to the host's root), and
// an image with isolation none is refused.
func TestImageBoxFailsClosed(t *testing.T) {
	_, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
		Policy: sandbox.Policy{RootFS: filepath.Join(t.TempDir(), "gone")}})
	if err == nil {
		t.Fatal("a box started on a missing image root")
	}
	_, err = sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(), AllowUnconfined: true,
		Policy: sandbox.Policy{RootFS: t.TempDir(), Isolation: "none"}})
	if err == nil {
		t.Fatal("isolation none ran with an image root")
	}
}
