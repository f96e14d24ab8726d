package gate

import (
	"io/fs"
	"maps"
	"slices"
	"testing"
)

// TestHeldOutRemoved: the harness's removal of the held-out tests is not
// a write of the gate's; anything else in their directory still is.
func TestHeldOutRemoved(t *testing.T) {
	dir := stamp{ino: 1, ctime: 10, mode: fs.ModeDir | 0o755}
	start := map[string]stamp{
		".": dir, "calc.go": {ino: 2, size: 5, ctime: 10}, "calc_hidden_test.go": {ino: 3, size: 7, ctime: 10},
		"sub": {ino: 4, ctime: 10, mode: fs.ModeDir | 0o755}, "sub/x_test.go": {ino: 5, size: 1, ctime: 10},
	}
	touched := dir
	touched.ctime = 20
	cases := []struct {
		name  string
		edit  func(now map[string]stamp)
		wrote []string
	}{
		{"held-out file removed", func(now map[string]stamp) { delete(now, "calc_hidden_test.go"); now["."] = touched }, nil},
		{"both removed", func(now map[string]stamp) {
			delete(now, "calc_hidden_test.go")
			delete(now, "sub/x_test.go")
			now["."] = touched
			now["sub"] = stamp{ino: 4, ctime: 20, mode: fs.ModeDir | 0o755}
		}, nil},
		{"removed and a file added beside", func(now map[string]stamp) {
			delete(now, "calc_hidden_test.go")
			now["."] = touched
			now["zz_test.go"] = stamp{ino: 9, ctime: 20}
		}, []string{"./", "zz_test.go"}},
		{"removed and the directory chmodded", func(now map[string]stamp) {
			delete(now, "calc_hidden_test.go")
			now["."] = stamp{ino: 1, ctime: 20, mode: fs.ModeDir | 0o777}
		}, []string{"./"}},
		{"held-out file rewritten", func(now map[string]stamp) { now["calc_hidden_test.go"] = stamp{ino: 3, size: 9, ctime: 20} },
			[]string{"calc_hidden_test.go"}},
		{"a file of the change removed", func(now map[string]stamp) { delete(now, "calc.go"); now["."] = touched },
			[]string{"./", "calc.go"}},
		{"nothing held out", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := maps.Clone(start)
			if c.edit != nil {
				c.edit(now)
			}
			heldOutRemoved(start, now, []string{"calc_hidden_test.go", "sub/x_test.go"})
			out, _ := wsState{stamps: now}.changedSince(wsState{stamps: start})
			if !slices.Equal(out, c.wrote) {
				t.Fatalf("writes %q, want %q", out, c.wrote)
			}
		})
	}
}
