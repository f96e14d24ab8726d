package sandbox

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzParseTree: a tree object from a hostile repository never panics
// the parser, and every entry it accepts has a name the snapshot can
// write under its own directory and a mode git checks out.
func FuzzParseTree(f *testing.F) {
	id := bytes.Repeat([]byte{0xab}, 20)
	f.Add(append([]byte("100644 a.txt\x00"), id...))
	f.Add(append(append([]byte("40000 dir\x00"), id...), append([]byte("120000 link\x00"), id...)...))
	f.Add(append([]byte("100644 ..\x00"), id...))
	f.Add(append([]byte("160000 .GIT\x00"), id...))
	f.Add([]byte("100644 short\x00abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseTree("t", data, 20)
		if err != nil {
			return
		}
		for name, e := range entries {
			if name == "" || name == "." || name == ".." || strings.EqualFold(name, ".git") || strings.ContainsAny(name, "/\x00") {
				t.Fatalf("accepted the name %q", name)
			}
			if b, err := hex.DecodeString(e.id); err != nil || len(b) != 20 {
				t.Fatalf("entry %q has id %q", name, e.id)
			}
			switch e.mode {
			case "100644", "100755", "120000", "40000", "160000":
			default:
				t.Fatalf("entry %q has mode %q", name, e.mode)
			}
		}
	})
}

// TestParseTreeRefusesWhatGitWouldNotCheckOut: the table of names and
// modes a hostile tree may hold.
func TestParseTreeRefusesWhatGitWouldNotCheckOut(t *testing.T) {
	id := string(bytes.Repeat([]byte{1}, 20))
	for _, c := range []struct {
		entry string
		ok    bool
	}{
		{"100644 a.txt\x00" + id, true},
		{"100755 run.sh\x00" + id, true},
		{"40000 dir\x00" + id, true},
		{"120000 link\x00" + id, true},
		{"160000 sub\x00" + id, true},
		{"100644 ..\x00" + id, false},
		{"100644 .\x00" + id, false},
		{"40000 .git\x00" + id, false},
		{"40000 .Git\x00" + id, false},
		{"100644 \x00" + id, false},
		{"100666 a\x00" + id, false},
		{"100644 a\x00" + id[:5], false},
		{"100644a\x00" + id, false},
	} {
		_, err := parseTree("t", []byte(c.entry), 20)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.entry, err, c.ok)
		}
	}
}
