package gocanary

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mapTree is a Tree over files in memory.
type mapTree map[string]string

func (m mapTree) Dirs() []string {
	set := map[string]bool{}
	for p := range m {
		set[filepath.ToSlash(filepath.Dir(p))] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func (m mapTree) Files(dir string) []string {
	var out []string
	for p := range m {
		if filepath.ToSlash(filepath.Dir(p)) == dir {
			out = append(out, filepath.Base(p))
		}
	}
	slices.Sort(out)
	return out
}

func (m mapTree) ReadFile(rel string) ([]byte, error) {
	s, ok := m[rel]
	if !ok {
		return nil, os.ErrNotExist
	}
	return []byte(s), nil
}

func TestAffected(t *testing.T) {
	tree := mapTree{
		"go.mod":                "module example.com/m\n",
		"a/a.go":                "package a\n",
		"a/testdata/in.txt":     "x",
		"b/b.go":                "package b\n\nimport \"example.com/m/a\"\n",
		"c/c_test.go":           "package c\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/b\"\n)\n",
		"d/d.go":                "package d\n",
		"e/e_test.go":           "package e\n\nimport \"os/exec\"\n",
		"sub/go.mod":            "module example.com/sub\n",
		"sub/s.go":              "package sub\n",
		"f/f.go":                "package f\n\nimport \"example.com/sub\"\n",
		"scripts/run.sh":        "#!/bin/sh\n",
		"g/constrained_test.go": "//go:build never\n\npackage g\n\nimport \"example.com/m/d\"\n",
	}
	cases := []struct {
		changed []string
		want    string
		all     bool
	}{
		{nil, "", false},
		{[]string{"a/a.go"}, "a b c e", false},
		{[]string{"a/testdata/in.txt"}, "a b c e", false},
		{[]string{"d/d.go"}, "d e g", false}, // imports behind any constraint count
		{[]string{"sub/s.go"}, "e f sub", false},
		{[]string{"c/c_test.go"}, "c e", false},
		{[]string{"go.sum"}, "", true},
		{[]string{"vendor/x/y.go"}, "", true},
		{[]string{"scripts/run.sh"}, "", true}, // outside every package
	}
	for _, c := range cases {
		got, all := Affected(tree, c.changed)
		if all != c.all {
			t.Errorf("%v: all %v, want %v", c.changed, all, c.all)
		}
		if s := strings.Join(slices.Sorted(maps.Keys(got)), " "); !c.all && s != c.want {
			t.Errorf("%v: affected %q, want %q", c.changed, s, c.want)
		}
	}
}

func TestSeal(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"named", "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tt.Log(1)\n}\n", "func TestA(t *testing.T) {t.Cleanup("},
		{"unnamed", "package p\n\nimport \"testing\"\n\nfunc TestA(*testing.T) {}\n", "func TestA(tb *testing.T) {tb.Cleanup("},
		{"blank", "package p\n\nimport \"testing\"\n\nvar tb = 1\n\nfunc TestA(_ *testing.T) {}\n", "func TestA(tb1 *testing.T) {tb1.Cleanup("},
		{"renamed import", "package p\n\nimport tt \"testing\"\n\nfunc TestA(x *tt.T) {}\n", "func TestA(x *tt.T) {x.Cleanup("},
		{"dot import", "package p\n\nimport . \"testing\"\n\nfunc TestA(x *T) {}\n", "func TestA(x *T) {x.Cleanup("},
		{"fuzz target", "package p\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n", "func FuzzA(f *testing.F) {f.Cleanup("},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, toks, ok := seal("p_test.go", []byte(c.src))
			if !ok || len(toks) != 1 || !strings.Contains(string(out), c.want) {
				t.Fatalf("ok %v, tokens %v:\n%s", ok, toks, out)
			}
			if strings.Count(string(out), "\n") != strings.Count(c.src, "\n") {
				t.Errorf("lines moved:\n%s", out)
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "p_test.go", out, 0); err != nil {
				t.Errorf("sealed source does not parse: %v\n%s", err, out)
			}
		})
	}
	// Not tests: methods, lower-case names, TestMain, other signatures.
	src := "package p\n\nimport \"testing\"\n\ntype s struct{}\n\nfunc (s) TestA(t *testing.T) {}\nfunc Testa(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\nfunc TestB(t *testing.B) {}\nfunc TestC(t *testing.T) int { return 0 }\n"
	if out, toks, _ := seal("p_test.go", []byte(src)); len(toks) != 0 || string(out) != src {
		t.Errorf("sealed what go test does not run: %v\n%s", toks, out)
	}
}

func TestStyle(t *testing.T) {
	for in, want := range map[string]string{"HTTPServerOK": "HTTP Server OK", "parseURL2x": "parse URL2x", "Add": "Add", "": ""} {
		if got := strings.Join(splitCamel(in), " "); got != want {
			t.Errorf("splitCamel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"%d %s %q %v %t %5.2f %x %%": "isssbfi", "x = %-10s": "s", "%w": "", "%*d": "", "%[1]d": "", "%p": ""} {
		got, ok := verbKinds(in)
		if string(got) != want || ok != (want != "" || in == "%%") {
			t.Errorf("verbKinds(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	src := "package p\n\nimport \"testing\"\n\nfunc TestParse_EmptyHeader(t *testing.T) { t.Errorf(\"Parse(%q) = %v\", \"\", nil) }\n\nfunc TestParse_LongLine(t *testing.T) { t.Fatalf(`got %d`, 1) }\n"
	f, _ := parser.ParseFile(token.NewFileSet(), "p_test.go", src, 0)
	st := &style{idents: map[string]bool{}}
	st.learn(f, []byte(src))
	if len(st.sites) != 2 {
		t.Fatalf("sites %v", st.sites)
	}
	for range 20 {
		n := st.name()
		if !strings.HasPrefix(n, "Test") || !strings.Contains(n, "_") || n == "TestParse_EmptyHeader" || n == "TestParse_LongLine" {
			t.Errorf("name %q is not in the package's style, or taken", n)
		}
		if call := st.failure("t"); !strings.HasPrefix(call, "t.Errorf(\"Parse(%q) = %v\", \"") && !strings.HasPrefix(call, "t.Fatalf(`got %d`, ") {
			t.Errorf("failure %q is not one of the package's", call)
		}
	}
}

// TestCanaryPlacement: the canaries go on blank lines between
// declarations (after the imports), so no line of the file moves.
func TestCanaryPlacement(t *testing.T) {
	src := "package p\n\nimport \"testing\"\n\n/*\n\n*/\n\nfunc TestA(t *testing.T) {\n\n\tt.Log(1)\n}\n\nfunc TestB(t *testing.T) {}\n"
	tree := mapTree{"go.mod": "module p\n", "p_test.go": src}
	for range 10 {
		p := NewPlan(tree, Options{All: true, Failing: true, Passing: true})
		out := string(p.overlay["p_test.go"])
		if strings.Count(out, "\n") != strings.Count(src, "\n") {
			t.Fatalf("lines moved:\n%s", out)
		}
		pp := p.pkgs["."]
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if strings.Contains(l, "func "+pp.failing+"(") || strings.Contains(l, "func "+pp.passing+"(") {
				if i != 3 && i != 7 && i != 12 {
					t.Errorf("a canary on line %d, not a free blank line:\n%s", i+1, out)
				}
			}
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "p_test.go", out, 0); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
}
