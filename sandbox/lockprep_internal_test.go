//go:build linux

package sandbox

import (
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeccompPrepIsUsedOnlyWhenItFits: init loads the programs it
// assembled before its setup only if they were made for the setup's
// NestedUser; for anything else (none prepared, prepared for the other
// kind of harness, prepared empty) it assembles them at the take. A
// wrong pick would give commands a user namespace the box forbids, or
// deny one they need.
func TestSeccompPrepIsUsedOnlyWhenItFits(t *testing.T) {
	fresh := map[bool]*seccompProgs{}
	for _, nested := range []bool{false, true} {
		p, err := assembleSeccomp(nested)
		if err != nil {
			t.Fatal(err)
		}
		fresh[nested] = p
	}
	if reflect.DeepEqual(fresh[false].main, fresh[true].main) {
		t.Fatal("the programs do not depend on NestedUser: this test would prove nothing")
	}
	for _, c := range []struct {
		name     string
		prepared *seccompProgs
		nested   bool
		same     bool // the prepared programs are the ones loaded
	}{
		{"none prepared", nil, true, false},
		{"prepared for it", fresh[true], true, true},
		{"prepared for it, not nested", fresh[false], false, true},
		{"prepared for the other kind", fresh[false], true, false},
		{"prepared for the other kind, not nested", fresh[true], false, false},
		{"prepared empty", &seccompProgs{nestedUser: true}, true, false},
		{"prepared without its compat program", &seccompProgs{nestedUser: true, main: fresh[true].main}, true, false},
	} {
		got, err := seccompFor(c.prepared, c.nested)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (got == c.prepared) != c.same {
			t.Errorf("%s: the prepared programs used: %v, want %v", c.name, got == c.prepared, c.same)
		}
		if !reflect.DeepEqual(got, fresh[c.nested]) {
			t.Errorf("%s: the programs loaded are not the ones assembled for nested=%v", c.name, c.nested)
		}
	}
}

// TestSeccompPrepFromEnv: init prepares programs only for an environment
// that says which kind; anything else leaves the take to assemble them.
func TestSeccompPrepFromEnv(t *testing.T) {
	for _, c := range []struct {
		env    string
		want   bool
		nested bool
	}{{"1", true, true}, {"0", true, false}, {"", false, false}, {"yes", false, false}} {
		t.Setenv(prepNestedEnv, c.env)
		p := prepareSeccompFromEnv()
		if (p != nil) != c.want {
			t.Errorf("%q: prepared %v, want %v", c.env, p != nil, c.want)
			continue
		}
		if p != nil && (p.nestedUser != c.nested || len(p.main) == 0 || len(p.compat) == 0 || len(p.main) > unix.BPF_MAXINSNS) {
			t.Errorf("%q: prepared %+v", c.env, p)
		}
	}
}

// TestWarmCodecDecodesASetup: init's warm-up before its setup decodes a
// whole made-up setup (every codec a setup needs is built then), and
// changes nothing but its own variable.
func TestWarmCodecDecodesASetup(t *testing.T) {
	r, err := warmCodec()
	if err != nil {
		t.Fatal(err)
	}
	s := r.Setup
	if s == nil || s.Root != "/r" || len(s.Caches) != 1 || len(s.Caches[0].Lower) != 1 || !s.NestedUser || len(s.ReadOnly) != 1 {
		t.Fatalf("the made-up setup did not decode whole: %+v", s)
	}
}
