//go:build linux

package sandbox_test

import (
	"os"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestAttackLockedBoxCannotCloneIntoNamespaces: init assembles its two
// seccomp programs before its setup (a pooled init long before its box)
// and loads them at lockdown; programs made for the other kind of
// harness would let a command of a root harness's box make a user
// namespace, and with it the capabilities the box withholds. From
// inside a box started cold and one from the pool, on both kinds of
// harness, the intruder clones into new namespaces through the native
// clone(2) (the first program's check) and opens an AF_VSOCK socket with
// the family's upper half set (the second's): every one must fail.
func TestAttackLockedBoxCannotCloneIntoNamespaces(t *testing.T) {
	for _, c := range []struct {
		name           string
		nested, pooled bool
	}{{"root cold", false, false}, {"root pooled", false, true}, {"nested cold", true, false}, {"nested pooled", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			nested := c.nested || os.Geteuid() != 0
			if c.nested {
				if os.Geteuid() != 0 {
					t.Skip("a harness that is not root takes the nested path in the cases above")
				}
				sandbox.PretendNotRoot(t)
			}
			var b *sandbox.Box
			var ws string
			if c.pooled {
				b, ws = pooledBoxWS(t, sandbox.Policy{})
			} else {
				sandbox.ReleaseSpares()
				b, ws = newBox(t, sandbox.Policy{})
				if sandbox.Pooled(b) {
					t.Fatal("a box started after ReleaseSpares came from the pool")
				}
			}
			flag := "SANDGATE_NESTED=0"
			if nested {
				flag = "SANDGATE_NESTED=1"
			}
			out := intrude(t, b, ws, "clone,vsock", flag)
			if !strings.Contains(out, "held: clone into a new user+network namespace") || !strings.Contains(out, "upper 32 bits") {
				t.Errorf("the intruder did not try every attack:\n%s", out)
			}
			if !nested && !strings.Contains(out, "held: clone into a new user namespace") {
				t.Errorf("the intruder did not try a user namespace alone:\n%s", out)
			}
		})
	}
}

// pooledBoxWS is pooledBox (see there), with the box's workspace.
func pooledBoxWS(t *testing.T, p sandbox.Policy) (*sandbox.Box, string) {
	t.Helper()
	for try := 0; try < 5; try++ {
		if sandbox.SpareInit() == 0 {
			b, _ := newBox(t, p)
			b.Close()
			continue
		}
		b, ws := newBox(t, p)
		if sandbox.Pooled(b) {
			return b, ws
		}
		b.Close()
	}
	t.Fatal("no box came from the pool of pre-started inits")
	return nil, ""
}
