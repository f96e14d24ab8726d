//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sandgate/sandgate/sandbox"
)

// swapperSource swaps README.md (a regular file the box modified, same
// size as in the snapshot, so listing compares the bytes) with a
// FIFO holding a secret, with renameat2(RENAME_EXCHANGE), for a bounded
// time. Only the syscall package is used, so it builds without modules.
const swapperSource = `package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

const sysRenameat2 = %d

func main() {
	if err := syscall.Mkfifo("fifo", 0o644); err != nil {
		panic(err)
	}
	// O_RDWR never blocks on a FIFO and keeps a writer attached, so a
	// reader that opens it gets the secret at once.
	f, err := os.OpenFile("fifo", os.O_RDWR, 0)
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			f.Write([]byte("FIFO-SECRET\n"))
		}
	}()
	a, _ := syscall.BytePtrFromString("README.md")
	b, _ := syscall.BytePtrFromString("fifo")
	n := 0
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); n++ {
		at := int64(-100) // AT_FDCWD
		syscall.Syscall6(sysRenameat2, uintptr(at), uintptr(unsafe.Pointer(a)), uintptr(at), uintptr(unsafe.Pointer(b)), 2, 0)
	}
	fmt.Println("swaps", n)
}
`

// buildSwapper compiles the swapper for the box.
func buildSwapper(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module swapper\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(fmt.Sprintf(swapperSource, unix.SYS_RENAMEAT2)), 0o644)
	cmd := exec.Command("go", "build", "-o", "swapper", ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build swapper: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(filepath.Join(dir, "swapper"))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAttackFIFOSwapWhileListing: a command in the box keeps exchanging
// a changed file with a FIFO while the harness lists and reads the
// change. Every listing and read must return (a hang is a breach: the
// harness would block forever, deaf to cancellation), and no read may
// yield the FIFO's bytes.
func TestAttackFIFOSwapWhileListing(t *testing.T) {
	bin := buildSwapper(t)
	for _, noOverlay := range []bool{false, true} {
		t.Run(fmt.Sprintf("copy=%v", noOverlay), func(t *testing.T) {
			snap, b := snapshotBox(t, noOverlay)
			res, err := b.Exec(context.Background(), sandbox.Command{Args: []string{"sh", "-c", "cat > /tmp/swapper && chmod +x /tmp/swapper && printf 'CALC\\n' > README.md"}, Stdin: bin, Timeout: time.Minute})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("install swapper: %v %s", err, res.Output)
			}
			swapDone := make(chan *sandbox.Result, 1)
			go func() {
				res, _ := b.Exec(context.Background(), sandbox.Command{Args: []string{"/tmp/swapper"}, Timeout: time.Minute})
				swapDone <- res
			}()
			stats := listWhileSwapping(t, b, snap, swapDone)
			t.Logf("%s", stats)
		})
	}
}

// listWhileSwapping lists and reads the change until the swapper ends.
func listWhileSwapping(t *testing.T, b *sandbox.Box, snap string, swapDone chan *sandbox.Result) string {
	var lists, reads, refused int
	for {
		select {
		case res := <-swapDone:
			if res == nil || res.ExitCode != 0 || !strings.HasPrefix(string(res.Output), "swaps") {
				t.Fatalf("swapper did not run: %+v", res)
			}
			return fmt.Sprintf("%d listings, %d reads of README.md, %d refused as changed; swapper: %s", lists, reads, refused, strings.TrimSpace(string(res.Output)))
		default:
		}
		done := make(chan error, 1)
		go func() {
			changes, err := sandbox.Changes(snap, b.Upper(), b.Merged())
			for _, c := range changes {
				if err != nil || c.Path != "README.md" || c.Deleted {
					continue
				}
				body, rerr := readAll(c)
				switch {
				case errors.Is(rerr, sandbox.ErrChanged):
					refused++
				case rerr != nil:
					err = rerr
				case body != "CALC\n":
					err = fmt.Errorf("BREACH: the harness read %q from README.md", body)
				default:
					reads++
				}
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, sandbox.ErrChanged) {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("BREACH: listing the change hung while the box swapped a file with a FIFO")
		}
		lists++
	}
}

func readAll(c sandbox.Change) (string, error) {
	r, err := c.Open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

// TestAttackRewriteAfterCheck: the box rewrites a file in place (same
// inode, same size) after the harness read it for a verdict. A later read
// of the same Change, as promotion makes, must fail instead of yielding
// the new bytes.
func TestAttackRewriteAfterCheck(t *testing.T) {
	snap, _, err := sandbox.Snapshot(context.Background(), makeRepo(t), "HEAD", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sh(t, b, "echo checked > new.txt")
	changes, err := sandbox.Changes(snap, b.Upper(), b.Merged())
	if err != nil || len(changes) != 1 {
		t.Fatalf("changes %v: %v", changes, err)
	}
	if body, err := readAll(changes[0]); err != nil || body != "checked\n" {
		t.Fatalf("first read %q: %v", body, err)
	}
	sh(t, b, "printf 'swapped\\n' 1<> new.txt")
	body, err := readAll(changes[0])
	if !errors.Is(err, sandbox.ErrChanged) {
		t.Fatalf("BREACH: a rewritten file was read again as %q (err %v)", body, err)
	}
}

// snapshotBox starts a box over a snapshot of a fresh repository, with an
// overlay or (noOverlay) a private copy, closed with the test.
func snapshotBox(t *testing.T, noOverlay bool) (snap string, b *sandbox.Box) {
	t.Helper()
	snap, _, err := sandbox.Snapshot(context.Background(), makeRepo(t), "HEAD", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err = sandbox.Start(context.Background(), sandbox.Options{Snapshot: snap, StateDir: t.TempDir(), NoOverlay: noOverlay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return snap, b
}
