package testgate

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestFindTestDetection: each hit is a way production code learns it runs
// in a test binary or steers it; each miss is ordinary code that must not
// fail the gate.
func TestFindTestDetection(t *testing.T) {
	cases := []struct {
		name, imports, body, want string
	}{
		{"testing.Testing", `"testing"`, `if testing.Testing() { println() }`, "testing.Testing"},
		{"aliased testing", `tt "testing"`, `f := tt.Testing; _ = f`, "testing.Testing"},
		{"dot-imported testing", `. "testing"`, `_ = Testing()`, "testing.Testing"},
		{"testing.Init", `"testing"`, `testing.Init()`, "testing.Init"},
		{"flag lookup", `"flag"`, `_ = flag.Lookup("test.v")`, `the test flag "test.v"`},
		{"skip flag string", `"fmt"`, `fmt.Println("-test.skip=^TestAdd$")`, `the test flag "-test.skip=^TestAdd$"`},
		{"flag prefix", `"flag"; "strings"`, `flag.VisitAll(func(f *flag.Flag) { _ = strings.HasPrefix(f.Name, "test.") })`, `the test flag "test."`},
		{"binary name", `"os"; "path/filepath"`, `_ = filepath.Ext(os.Args[0]) == ".test"`, `name suffix ".test"`},
		{"assign os.Args", `"os"`, `os.Args = append(os.Args, "x")`, "assignment to os.Args"},
		{"assign element", `o "os"`, `o.Args[1] = "x"`, "assignment to os.Args"},
		{"dot-imported os", `. "os"`, `Args = nil`, "assignment to os.Args"},
		{"copy into os.Args", `"os"`, `copy(os.Args[1:], []string{"x"})`, "copy into os.Args"},
		{"append into os.Args", `"os"`, `_ = append(os.Args[:1], "x")`, "append into os.Args"},
		{"pointer to os.Args", `"os"`, `p := &os.Args; _ = p`, "address of os.Args"},
		{"reads os.Args", `"os"; "fmt"`, `fmt.Println(os.Args[1:], len(os.Args))`, ""},
		{"builds a new argv", `"os"`, `args := append(os.Args, "x"); _ = args`, ""},
		{"file names", `"os"`, `_, _ = os.ReadFile("test.txt"); _ = "testdata/test.json"`, ""},
		{"testing helpers", `"testing"`, `var tb testing.TB; _ = tb`, ""},
		{"unrelated Testing", `"example.com/x"`, `_ = x.Testing`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package p\n\nimport (" + strings.ReplaceAll(c.imports, "; ", "\n") + ")\n\nfunc f() {\n" + c.body + "\n}\n"
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			_, got := findTestDetection(f)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("findTestDetection = %q, want %q\n%s", got, c.want, src)
			}
		})
	}
}

func TestTestFuncs(t *testing.T) {
	src := "package p\nimport \"testing\"\nfunc TestA(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc Test_x(t *testing.T) {}\nfunc TestÄ(t *testing.T) {}\nfunc Testable(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\nfunc (s) TestM(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "p_test.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testFuncs(f), []string{"TestA", "Test", "Test_x", "TestÄ"}; !slices.Equal(got, want) {
		t.Fatalf("testFuncs = %v, want %v", got, want)
	}
}

func TestModIgnores(t *testing.T) {
	src := "module m\n\ngo 1.25\n\nignore ./sub // hidden\nignore (\n\t./a\n\tb/c\n)\nrequire x v1\n"
	if got, want := modIgnores([]byte(src)), []string{"./sub", "./a", "b/c"}; !slices.Equal(got, want) {
		t.Fatalf("modIgnores = %v, want %v", got, want)
	}
}
