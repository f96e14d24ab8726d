//go:build linux

package image_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/sandbox"
	"github.com/sandgate/sandgate/sandbox/image"
	"github.com/sandgate/sandgate/sandbox/image/imagetest"
)

// probeSrc runs inside a box on an image and tries to reach the host's
// root or to change the shared image; it prints "ESCAPE: …" for each
// try that works and "INFO: …" for what the test checks otherwise.
const probeSrc = `package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

func escape(f string, a ...any) { fmt.Printf("ESCAPE: "+f+"\n", a...) }

func main() {
	host := os.Args[1] // a host directory holding a file "secret"
	for _, p := range []string{host + "/secret", "/proc/1/root" + host + "/secret", "/proc/self/root" + host + "/secret",
		"/.oldroot" + host + "/secret", "/proc/1/cwd" + host + "/secret", "/usr/hostlink/secret", "/hostlink/secret"} {
		if _, err := os.ReadFile(p); err == nil {
			escape("read %s", p)
		}
	}
	for _, p := range []string{"/usr/bin/planted", "/var/tmp/planted", "/usr/local/bin/planted", "/proc/self/root/usr/bin/planted",
		"/proc/1/root/usr/bin/planted", "/planted", "/etc/planted", "/etc/ssl/planted"} {
		if err := os.WriteFile(p, []byte("x"), 0o755); err == nil {
			escape("wrote %s", p)
		}
	}
	if err := os.Chmod("/usr/bin/tool", 0o4777); err == nil {
		escape("chmod the image's tool")
	}
	if err := syscall.Mount("", "/usr", "", syscall.MS_REMOUNT|syscall.MS_BIND, ""); err == nil {
		escape("remounted /usr read-write")
	}
	if err := syscall.Unshare(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS); err == nil {
		if err := syscall.Mount("", "/usr", "", syscall.MS_REMOUNT|syscall.MS_BIND, ""); err == nil {
			escape("remounted /usr read-write in a new user namespace")
		}
		if err := os.WriteFile("/usr/bin/planted2", nil, 0o755); err == nil {
			escape("wrote /usr/bin/planted2 in a new user namespace")
		}
	}
	if err := syscall.Mknod("/tmp/sda", syscall.S_IFBLK|0o666, 8<<8); err == nil {
		escape("made a block device")
	}
	if err := syscall.Chroot("/tmp"); err == nil {
		escape("chroot")
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if t, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil {
			fmt.Printf("INFO: fd %s -> %s\n", fd.Name(), t)
		}
	}
	if t, err := os.Readlink("/proc/1/root"); err == nil {
		fmt.Println("INFO: /proc/1/root ->", t)
	}
	st, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "Seccomp:") || strings.HasPrefix(l, "NoNewPrivs:") || strings.HasPrefix(l, "CapEff:") {
			fmt.Println("INFO:", strings.Join(strings.Fields(l), " "))
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(l); len(f) > 5 && (f[4] == "/usr" || f[4] == "/var" || f[4] == "/") {
			fmt.Println("INFO: mount", f[4], f[5])
		}
	}
}
`

// TestAttackImageBoxEscape: a hostile image (links to the host's
// directories at the top and inside, world-writable directories, a
// set-user-ID tool) and a hostile command in the box on it: the command
// reads no host file, writes nothing of the image (also not through
// /proc/self/root or a new user namespace), keeps its seccomp filter
// and no-new-privileges, and the cached tree is unchanged afterwards.
func TestAttackImageBoxEscape(t *testing.T) {
	m := newHostMarker(t)
	os.Chmod(m.secret, 0o644)
	os.Chmod(m.dir, 0o755)
	probe := imagetest.BuildGo(t, probeSrc)
	exe := func(name string) ent { return ent{name: name, body: string(probe), typ: '0', mode: 0o4777} }
	ww := dir("var/tmp")
	ww.mode = 0o1777
	l := layerOf(t, dir("usr"), dir("usr/bin"), exe("usr/bin/probe"), exe("usr/bin/tool"), symlink("usr/hostlink", m.dir),
		symlink("hostlink", m.dir), symlink("bin", "usr/bin"), dir("var"), ww, dir("usr/local"), dir("usr/local/bin"),
		dir(".disk"), dir(".oldroot"), symlink("proc", "/"), symlink("dev", m.dir),
		dir("etc"), symlink("etc/ssl", "/"), symlink("etc/ld.so.conf.d", m.dir), file("etc/os-release", "ID=hostile\n"))
	p := layoutOf(t, imageOf(t, []string{"PATH=/usr/bin", "LD_PRELOAD=/hostlink/secret"}, l), "t")
	cache := t.TempDir()
	lease, err := image.Lease(context.Background(), cache, "oci:"+p+":t", image.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	before := treeOf(t, lease.RootFS)
	b, err := sandbox.Start(context.Background(), sandbox.Options{Workspace: t.TempDir(), StateDir: t.TempDir(),
		Policy: sandbox.Policy{RootFS: lease.RootFS, RootEnv: lease.Env}})
	if err != nil {
		t.Fatalf("start a box on the image: %v", err)
	}
	defer b.Close()
	res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"probe", m.dir}, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	t.Logf("probe:\n%s", out)
	if strings.Contains(out, "ESCAPE") {
		t.Errorf("the box got out:\n%s", out)
	}
	for _, want := range []string{"INFO: Seccomp: 2", "INFO: NoNewPrivs: 1", "INFO: CapEff: 0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("the box on an image lacks %q", want)
		}
	}
	// Only stdin, stdout, stderr and the probe's own /proc/self/fd: no
	// descriptor of init's or the harness's (or what they inherited).
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[1] == "fd" && f[2] != "0" && f[2] != "1" && f[2] != "2" && !strings.HasPrefix(f[4], "/proc/") {
			t.Errorf("a descriptor the command did not open: %s", l)
		}
	}
	if after := treeOf(t, lease.RootFS); after != before {
		t.Errorf("the cached tree changed while a box ran on it:\nbefore %s\nafter  %s", before, after)
	}
}

// treeOf lists a tree's names, modes and sizes.
func treeOf(t *testing.T, root string) string {
	t.Helper()
	var sb strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			sb.WriteString(strings.TrimPrefix(p, root) + " " + fi.Mode().String() + " " + string(rune('0'+fi.Size()%10)) + ";")
		}
		return nil
	})
	return sb.String()
}
