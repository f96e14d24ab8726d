package testgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// tellsOf type-checks src as a one-file package and lists its tells.
func tellsOf(t *testing.T, src string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range scanTells(f, typeCheck(fset, ".", []*ast.File{f})) {
		out = append(out, h.what)
	}
	return out
}

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
		{"flag built from constants", `"flag"`, `const p = "-te"; _ = flag.Lookup(p + "st.run")`, `the test flag "-test.run"`},
		{"binary name", `"os"; "path/filepath"`, `_ = filepath.Ext(os.Args[0]) == ".test"`, `name suffix ".test"`},
		{"assign os.Args", `"os"`, `os.Args = append(os.Args, "x")`, "assignment to os.Args"},
		{"assign element", `o "os"`, `o.Args[1] = "x"`, "assignment to os.Args"},
		{"dot-imported os", `. "os"`, `Args = nil`, "assignment to os.Args"},
		{"copy into os.Args", `"os"`, `copy(os.Args[1:], []string{"x"})`, "copy into os.Args"},
		{"append into os.Args", `"os"`, `_ = append(os.Args[:1], "x")`, "append into os.Args"},
		{"pointer to os.Args", `"os"`, `p := &os.Args; _ = p`, "address of os.Args"},
		// Stack and self inspection.
		{"runtime.Callers", `"runtime"`, `pcs := make([]uintptr, 9); _ = runtime.Callers(0, pcs)`, "runtime.Callers"},
		{"aliased runtime.Caller", `rt "runtime"`, `_, f, _, _ := rt.Caller(1); _ = f`, "runtime.Caller"},
		{"dot-imported runtime", `. "runtime"`, `_, f, _, _ := Caller(1); _ = f`, "runtime.Caller"},
		{"runtime.Callers as a value", `"runtime"`, `c := runtime.Callers; _ = c`, "runtime.Callers"},
		{"CallersFrames", `"runtime"`, `_ = runtime.CallersFrames(nil)`, "runtime.CallersFrames"},
		{"FuncForPC", `"runtime"`, `_ = runtime.FuncForPC(0)`, "runtime.FuncForPC"},
		{"runtime.Stack", `"runtime"`, `b := make([]byte, 99); _ = runtime.Stack(b, false)`, "runtime.Stack"},
		{"debug.Stack", `"runtime/debug"`, `_ = debug.Stack()`, "debug.Stack"},
		{"goroutine profile", `"os"; "runtime/pprof"`, `_ = pprof.Lookup("goroutine").WriteTo(os.Stdout, 2)`, "goroutine profile"},
		{"os.Executable", `"os"`, `exe, _ := os.Executable(); _ = exe`, "os.Executable"},
		{"/proc/self literal", `"os"`, `_, _ = os.ReadFile("/proc/self/cmdline")`, `"/proc/self/cmdline"`},
		{"/proc/self from constants", `"os"`, `const d = "/proc/"; _, _ = os.ReadFile(d + "self" + "/cmdline")`, `"/proc/self/cmdline"`},
		{"/proc/self by pid", `"fmt"; "os"`, `_, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getpid()))`, "/proc/self built at run time"},
		{"/proc/self joined", `"os"; "path/filepath"`, `s := "self"; _, _ = os.ReadFile(filepath.Join("/proc", s, "exe"))`, `"/proc" and "self" spelled apart`},
		{"/proc/self by pid joined", `"os"; "path/filepath"; "strconv"`, `_, _ = os.ReadFile(filepath.Join("/proc", strconv.Itoa(os.Getpid()), "cmdline"))`, "/proc/self built at run time"},
		{"/proc/self through DirFS", `"io/fs"; "os"`, `_, _ = fs.ReadFile(os.DirFS("/proc"), "self/cmdline")`, `"/proc" and "self" spelled apart`},
		{"re-exec os.Args[0]", `"os"; "os/exec"`, `_ = exec.Command(os.Args[0], "x").Run()`, "re-runs the test binary"},
		{"re-exec through a variable", `"context"; "os"; "os/exec"`, `self := os.Args[0]; _ = exec.CommandContext(context.Background(), self).Run()`, "re-runs the test binary"},
		{"exec.Cmd literal", `"os"; "os/exec"`, `c := exec.Cmd{Path: os.Args[0]}; _ = c`, "re-runs the test binary"},
		{"Cmd.Path assigned", `"os"; "os/exec"`, `c := exec.Command("x"); c.Path = os.Args[0]`, "re-runs the test binary"},
		{"syscall.Exec", `"os"; "syscall"`, `_ = syscall.Exec(os.Args[0], os.Args, nil)`, "re-runs the test binary"},
		{"os.Stdout reassigned", `"os"`, `r, w, _ := os.Pipe(); os.Stdout = w; _ = r`, "reassigns os.Stdout"},
		{"os.Stderr overwritten", `"os"`, `f, _ := os.Create("x"); *os.Stderr = *f`, "reassigns os.Stderr"},
		{"pointer to os.Stdout", `"os"`, `p := &os.Stdout; _ = p`, "address of os.Stdout"},
		{"dup2 onto 1", `"syscall"`, `_ = syscall.Dup2(3, 1)`, "dup2 onto fd 1"},
		{"unix.Dup2 onto stderr", `"golang.org/x/sys/unix"`, `_ = unix.Dup2(3, unix.Stderr)`, "dup2 onto the standard output or error"},
		{"dup3 onto os.Stdout.Fd()", `"os"; "syscall"`, `_ = syscall.Dup3(3, int(os.Stdout.Fd()), 0)`, "dup3 onto os.Stdout"},
		{"dup2 onto a computed fd", `"syscall"`, `fd := len("ab"); _ = syscall.Dup2(3, fd+0*fd)`, "dup2 onto a descriptor chosen at run time"},
		{"raw dup2", `"syscall"`, `_, _, _ = syscall.Syscall(syscall.SYS_DUP2, 3, 2, 0)`, "dup2 (raw system call) onto fd 2"},
		{"re-exec through a struct field", `"os"; "os/exec"`, `var self struct{ exe string }; self.exe = os.Args[0]; _ = exec.Command(self.exe).Run()`, "re-runs the test binary"},
		{"re-exec through a struct literal", `"os"; "os/exec"`, `self := struct{ exe string }{exe: os.Args[0]}; _ = exec.Command(self.exe).Run()`, "re-runs the test binary"},
		{"reads its own binary", `"os"`, `_, _ = os.ReadFile(os.Args[0])`, "the test binary's own file or directory"},
		{"through a copy of os.Args", `"os"`, `args := os.Args; _, _ = os.Open(args[0])`, "the test binary's own file or directory"},
		{"the binary's directory", `"os"; "path/filepath"`, `n := filepath.Dir(filepath.Dir(os.Args[0])); _ = n`, "the test binary's own file or directory"},
		{"debug/elf", `"debug/elf"`, `_, _ = elf.Open("x")`, "reads executables' code and symbols (debug/elf)"},
		{"debug/gosym", `"debug/gosym"`, `var t *gosym.Table; _ = t`, "reads executables' code and symbols (debug/gosym)"},
		// Ordinary code.
		{"program name in usage", `"fmt"; "os"; "path/filepath"`, `fmt.Println("usage:", filepath.Base(os.Args[0]))`, ""},
		{"opens its arguments", `"os"; "path/filepath"`, `_, _ = os.ReadFile(os.Args[1]); for _, a := range os.Args[1:] { _, _ = os.Stat(filepath.Join("d", a)) }`, ""},
		{"reads os.Args", `"os"; "fmt"`, `fmt.Println(os.Args[1:], len(os.Args))`, ""},
		{"builds a new argv", `"os"`, `args := append(os.Args, "x"); _ = args`, ""},
		{"file names", `"os"`, `_, _ = os.ReadFile("test.txt"); _ = "testdata/test.json"`, ""},
		{"testing helpers", `"testing"`, `var tb testing.TB; _ = tb`, ""},
		{"unrelated Testing", `"example.com/x"`, `_ = x.Testing`, ""},
		{"shadowed runtime", `"runtime"`, `runtime := struct{ Caller func() }{func() {}}; runtime.Caller(); _ = runtime`, ""},
		{"unrelated Caller", `"example.com/log"`, `_ = log.Caller()`, ""},
		{"other /proc files", `"os"`, `_, _ = os.ReadFile("/proc/meminfo"); _, _ = os.ReadFile("/proc/cpuinfo")`, ""},
		{"exec passes os.Args on", `"os"; "os/exec"`, `_ = exec.Command("git", os.Args[1:]...).Run()`, ""},
		{"writes to os.Stdout", `"fmt"; "os"`, `fmt.Fprintln(os.Stdout, "x"); _ = os.Stdout.Sync()`, ""},
		{"dup2 onto another fd", `"syscall"`, `_ = syscall.Dup2(3, 10)`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package p\n\nimport (" + strings.ReplaceAll(c.imports, "; ", "\n") + ")\n\nfunc f() {\n" + c.body + "\n}\n"
			got := tellsOf(t, src)
			if c.want == "" && len(got) > 0 {
				t.Fatalf("tells %q in ordinary code\n%s", got, src)
			}
			if c.want != "" && !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, c.want) }) {
				t.Fatalf("tells = %q, want one with %q\n%s", got, c.want, src)
			}
		})
	}
}

// TestLinknameIsATell: //go:linkname reaches any package's internals (the
// testing package's, the runtime's) past the names the scan knows.
func TestLinknameIsATell(t *testing.T) {
	src := "package p\n\nimport _ \"unsafe\"\n\n//go:linkname running testing.running\nvar running bool\n"
	if got := tellsOf(t, src); len(got) != 1 || !strings.Contains(got[0], "go:linkname") {
		t.Fatalf("tells = %q", got)
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
