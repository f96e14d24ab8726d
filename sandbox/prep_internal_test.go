//go:build linux

package sandbox

import "testing"

// TestConflictsWithPrep: the read-only paths that an init's prepared
// root would show differently from one built afresh (see
// conflictsWithPrep) send the box to a fresh root; the others do not.
func TestConflictsWithPrep(t *testing.T) {
	for _, c := range []struct {
		ro   []string
		want bool
	}{
		{nil, false},
		{[]string{"/srv/data", "/usr/local/share", "/etc/hosts.allow", "/var/lib/x"}, false},
		{[]string{"/devices"}, false},
		{[]string{"/"}, true},
		{[]string{"//"}, true},
		{[]string{"/srv", "/dev"}, true},
		{[]string{"/dev/shm/x"}, true},
		{[]string{"/proc/sys"}, true},
		{[]string{"/./proc"}, true},
		{[]string{"/lib/x86_64-linux-gnu"}, true},
		{[]string{"/bin"}, true},
		{[]string{"../outside"}, true},
		{[]string{"dev"}, true},
	} {
		if got := conflictsWithPrep(c.ro); got != c.want {
			t.Errorf("conflictsWithPrep(%q) = %v, want %v", c.ro, got, c.want)
		}
	}
}
