package runtime_test

import (
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

type box struct{ name string }

func TestServiceKeys(t *testing.T) {
	boxKey := runtime.NewServiceKey[*box]("box")
	other := runtime.NewServiceKey[*box]("box") // same name, different key
	count := runtime.NewServiceKey[int]("count")

	var base runtime.Services
	boxKey.Set(&base, &box{"a"})
	count.Set(&base, 1)
	var env runtime.Services
	count.Set(&env, 2)
	merged := base.Merge(env)

	in := &runtime.Input{Services: merged}
	if b, ok := boxKey.Get(in); !ok || b.name != "a" {
		t.Fatalf("box: %v %v", b, ok)
	}
	if n, ok := count.Get(in); !ok || n != 2 {
		t.Fatalf("the environment's service must win: %v %v", n, ok)
	}
	if _, ok := other.Get(in); ok {
		t.Fatal("a key with the same name is a different key")
	}
	if _, ok := boxKey.Get(&runtime.Input{}); ok {
		t.Fatal("empty services found a box")
	}
	// Set on a copy must not change what other holders of the set see:
	// every node's Input holds a copy.
	cp := in.Services
	boxKey.Set(&cp, &box{"b"})
	if b, _ := boxKey.Get(in); b.name != "a" {
		t.Fatalf("Set on a copy changed the original: %v", b.name)
	}
	if n, _ := count.Lookup(base); n != 1 {
		t.Fatalf("Merge changed its input: %v", n)
	}
}
