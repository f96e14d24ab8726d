//go:build linux

package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
)

// TestChannelRefusesOtherSenders: bytes written to the control channel by
// any process but the one the harness started as init are refused, even
// when that process holds init's end of the socket.
func TestChannelRefusesOtherSenders(t *testing.T) {
	harness, child, err := newChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer harness.Close()
	thief := exec.Command("sh", "-c", `printf '{"id":1,"result":{"exit_code":0}}\n' >&3`)
	thief.ExtraFiles = []*os.File{child}
	if err := thief.Run(); err != nil {
		t.Fatal(err)
	}
	r, err := newCredReader(harness, os.Getpid()) // "init" is this process
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Read(make([]byte, 256))
	var forged errForged
	if !errors.As(err, &forged) || int(forged.pid) == os.Getpid() {
		t.Fatalf("BREACH: a reply from another process was read (err %v)", err)
	}
	// Init's own bytes are taken.
	if _, err := child.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	n, err := r.Read(make([]byte, 256))
	if err != nil || n != 3 {
		t.Fatalf("init's own reply was refused: %d, %v", n, err)
	}
	child.Close()
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("closed channel: %v, want EOF", err)
	}
}
