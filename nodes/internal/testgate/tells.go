package testgate

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A tell is one place where production code can learn that it runs in a
// test binary, or steer it: the testing package's own hooks, the test
// flags and binary name, writes to os.Args, stack and self inspection
// (a caller's file name ends in _test.go; the executable is calc.test;
// its code and symbols hold the seals), /proc/self, re-running the test
// binary or opening its file or directory, taking over stdout or stderr
// (where go test -json reads the report), and //go:linkname into the
// runtime or testing internals.
type tell struct {
	pos  token.Pos
	what string
	// comment is the directive's text, for a //go:linkname tell.
	comment string
}

// testFlag matches a string that names one of the testing package's
// flags ("test.v", "-test.skip=^TestAdd$") or their common prefix
// ("test.", for code that walks flag.CommandLine).
var testFlag = regexp.MustCompile(`^-{0,2}test\.((artifacts|bench|benchmem|benchtime|blockprofile|blockprofilerate|count|coverprofile|cpu|cpuprofile|failfast|fullpath|fuzz|fuzzcachedir|fuzzminimizetime|fuzztime|fuzzworker|gocoverdir|list|memprofile|memprofilerate|mutexprofile|mutexprofilefraction|outputdir|paniconexit0|parallel|run|short|shuffle|skip|testlogfile|timeout|trace|v)(=.*)?)?$`)

const unixPkg = "golang.org/x/sys/unix"

// inspects are the functions whose only use in a library is to look at
// the running program itself: the stack (and so the callers' files) or
// the executable.
var inspects = map[string]map[string]string{
	"testing":       {"Testing": "testing.Testing", "Init": "testing.Init"},
	"runtime":       {"Caller": "stack inspection: runtime.Caller", "Callers": "stack inspection: runtime.Callers", "CallersFrames": "stack inspection: runtime.CallersFrames", "FuncForPC": "stack inspection: runtime.FuncForPC", "Stack": "stack inspection: runtime.Stack", "GoroutineProfile": "stack inspection: runtime.GoroutineProfile"},
	"runtime/debug": {"Stack": "stack inspection: debug.Stack", "PrintStack": "stack inspection: debug.PrintStack"},
	"os":            {"Executable": "self inspection: os.Executable"},
}

// execs start a program, named by the argument at the index given;
// named from os.Args they re-run the test binary.
var execs = map[string]map[string]int{
	"os/exec": {"Command": 0, "CommandContext": 1},
	"os":      {"StartProcess": 0},
	"syscall": {"Exec": 0, "ForkExec": 0, "StartProcess": 0},
	unixPkg:   {"Exec": 0},
}

// pids name the running process, which /proc names as self.
var pids = map[string]map[string]bool{
	"os":      {"Getpid": true},
	"syscall": {"Getpid": true, "Gettid": true},
	unixPkg:   {"Getpid": true, "Gettid": true},
}

// scanner finds the tells of one file.
type scanner struct {
	f    *ast.File
	info *types.Info
	// dots are the paths the file imports with a dot.
	dots []string
	// argv are the variables holding os.Args or a part of it; argv0
	// those holding os.Args[0] (or all of os.Args).
	argv, argv0 map[types.Object]bool
	tells       []tell
	// procDir and selfName hold where the file spells "/proc" and "self"
	// apart (os.DirFS("/proc") opening "self/exe").
	procDir, selfName token.Pos
	// procUntil ends the call last found building /proc/self: the
	// calls inside it are the same finding.
	procUntil token.Pos
}

// scanTells lists the tells of f in source order; info is its package's
// type information (see typeCheck).
func scanTells(f *ast.File, info *types.Info) []tell {
	s := &scanner{f: f, info: info, argv: map[types.Object]bool{}, argv0: map[types.Object]bool{}}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if im.Name != nil && im.Name.Name == "." {
			s.dots = append(s.dots, p)
		}
		if executables[p] {
			s.add(im.Pos(), "self inspection: reads executables' code and symbols ("+p+")")
		}
	}
	s.trackArgv()
	ast.Inspect(f, s.visit)
	if s.procDir.IsValid() && s.selfName.IsValid() {
		s.add(s.selfName, `/proc/self: "/proc" and "self" spelled apart`)
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//go:linkname ") {
				s.tells = append(s.tells, tell{pos: c.Pos(), what: "//go:linkname: direct access to another package's internals", comment: c.Text})
			}
		}
	}
	return dedupe(s.tells)
}

func (s *scanner) add(pos token.Pos, what string) {
	s.tells = append(s.tells, tell{pos: pos, what: what})
}

func (s *scanner) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.SelectorExpr, *ast.Ident:
		if pkg, name, ok := s.ref(n.(ast.Expr)); ok {
			if what, ok := inspects[pkg][name]; ok {
				s.add(n.Pos(), what)
			}
		}
	case *ast.BasicLit, *ast.BinaryExpr:
		s.constString(n.(ast.Expr))
	case *ast.AssignStmt:
		s.assign(n)
	case *ast.UnaryExpr:
		if n.Op == token.AND && (s.isArgs(n.X) || s.isStdStream(n.X)) {
			s.add(n.Pos(), "address of "+s.describe(n.X))
		}
	case *ast.CallExpr:
		s.call(n)
	case *ast.CompositeLit:
		s.cmdLiteral(n)
	}
	return true
}

// ref resolves e to a package-level name of an import: pkg.Name, or Name
// of a dot import. A local variable or field with the same name is not
// one (go/types resolved it to something else).
func (s *scanner) ref(e ast.Expr) (pkg, name string, ok bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.SelectorExpr:
		if id, isID := e.X.(*ast.Ident); isID {
			if pn, isPkg := s.info.Uses[id].(*types.PkgName); isPkg {
				return pn.Imported().Path(), e.Sel.Name, true
			}
		}
	case *ast.Ident:
		if s.info.Uses[e] != nil || s.info.Defs[e] != nil {
			return "", "", false
		}
		for _, p := range s.dots {
			if _, known := inspects[p][e.Name]; known || (p == "os" && (e.Name == "Args" || e.Name == "Stdout" || e.Name == "Stderr")) {
				return p, e.Name, true
			}
		}
	}
	return "", "", false
}

func (s *scanner) is(e ast.Expr, pkg string, names ...string) bool {
	p, n, ok := s.ref(e)
	if !ok || p != pkg {
		return false
	}
	for _, want := range names {
		if n == want {
			return true
		}
	}
	return false
}

// isArgs: os.Args, or an element or slice of it.
func (s *scanner) isArgs(e ast.Expr) bool {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		default:
			return s.is(x, "os", "Args")
		}
	}
}

// isStdStream: os.Stdout or os.Stderr, or what such a pointer points to.
func (s *scanner) isStdStream(e ast.Expr) bool {
	if st, ok := ast.Unparen(e).(*ast.StarExpr); ok {
		e = st.X
	}
	return s.is(e, "os", "Stdout", "Stderr")
}

func (s *scanner) describe(e ast.Expr) string {
	if s.isArgs(e) {
		return "os.Args"
	}
	if st, ok := ast.Unparen(e).(*ast.StarExpr); ok {
		e = st.X
	}
	_, n, _ := s.ref(e)
	return "os." + n
}

// trackArgv finds the variables assigned os.Args or a part of it, so a
// program started with one of them is the test binary again.
func (s *scanner) trackArgv() {
	ast.Inspect(s.f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if i < len(n.Rhs) && len(n.Lhs) == len(n.Rhs) && s.refersToArgv(n.Rhs[i]) {
					zero := s.refersToArgv0(n.Rhs[i])
					switch l := l.(type) {
					case *ast.Ident:
						s.mark(l, zero)
					case *ast.SelectorExpr: // a struct field: self.exe = os.Args[0]
						s.mark(l.Sel, zero)
					}
				}
			}
		case *ast.KeyValueExpr: // a struct literal: st{exe: os.Args[0]}
			if id, ok := n.Key.(*ast.Ident); ok && s.refersToArgv(n.Value) {
				s.mark(id, s.refersToArgv0(n.Value))
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if i < len(n.Values) && s.refersToArgv(n.Values[i]) {
					s.mark(id, s.refersToArgv0(n.Values[i]))
				}
			}
		}
		return true
	})
}

// mark records that id holds os.Args or a part of it; zero, that the
// part may be os.Args[0].
func (s *scanner) mark(id *ast.Ident, zero bool) {
	o := s.info.Defs[id]
	if o == nil {
		o = s.info.Uses[id]
	}
	if o != nil {
		s.argv[o] = true
		s.argv0[o] = s.argv0[o] || zero
	}
}

// refersToArgv: an expression that mentions os.Args or a variable
// holding it.
func (s *scanner) refersToArgv(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			found = found || s.is(n, "os", "Args")
		case *ast.Ident:
			found = found || s.argv[s.info.Uses[n]] || s.is(n, "os", "Args")
		}
		return !found
	})
	return found
}

func (s *scanner) assign(n *ast.AssignStmt) {
	for _, l := range n.Lhs {
		switch {
		case s.isArgs(l):
			s.add(n.Pos(), "assignment to os.Args")
		case s.isStdStream(l):
			s.add(n.Pos(), "reassigns "+s.describe(l)+", where go test -json reads the report")
		}
		// cmd.Path = os.Args[0]: an exec.Cmd made to run the test
		// binary again.
		if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Path" && len(n.Lhs) == len(n.Rhs) {
			for i := range n.Lhs {
				if n.Lhs[i] == l && s.refersToArgv(n.Rhs[i]) {
					s.add(n.Pos(), "re-runs the test binary (os.Args)")
				}
			}
		}
	}
}

func (s *scanner) call(n *ast.CallExpr) {
	if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "copy" || id.Name == "append") && len(n.Args) > 0 {
		if _, builtin := s.info.Uses[id].(*types.Builtin); builtin && s.writesArgs(id.Name, n.Args[0]) {
			s.add(n.Pos(), id.Name+" into os.Args")
		}
	}
	pkg, name, ok := s.ref(n.Fun)
	if !ok {
		s.procBuilt(n)
		return
	}
	prog, isExec := execs[pkg][name]
	switch {
	case isExec:
		if prog < len(n.Args) && s.refersToArgv(n.Args[prog]) {
			s.add(n.Pos(), "re-runs the test binary (os.Args)")
		}
	case (pkg == "syscall" || pkg == unixPkg) && (name == "Dup2" || name == "Dup3") && len(n.Args) >= 2:
		if fd := s.stdTarget(n.Args[1]); fd != "" {
			s.add(n.Pos(), fmt.Sprintf("%s onto %s, where go test -json reads the report", strings.ToLower(name), fd))
		}
	case (pkg == "syscall" || pkg == unixPkg) && strings.Contains(name, "Syscall") && len(n.Args) >= 3 && s.isDupTrap(n.Args[0]):
		if fd := s.stdTarget(n.Args[2]); fd != "" {
			s.add(n.Pos(), "dup2 (raw system call) onto "+fd+", where go test -json reads the report")
		}
	case selfFiles[pkg][name] && slices.ContainsFunc(n.Args, s.refersToArgv0):
		s.add(n.Pos(), "self inspection: the test binary's own file or directory (from os.Args)")
	case pkg == "runtime/pprof" && name == "Lookup" && len(n.Args) == 1:
		if v, isConst := s.stringValue(n.Args[0]); !isConst || v == "goroutine" {
			s.add(n.Pos(), "stack inspection: the goroutine profile")
		}
	default:
		s.procBuilt(n)
	}
}

// writesArgs: copy(os.Args…, …) and append(os.Args[:i], …) write into
// os.Args' array; append(os.Args, …) writes only past its length.
func (s *scanner) writesArgs(fn string, e ast.Expr) bool {
	if fn == "copy" {
		return s.isArgs(e)
	}
	sl, ok := ast.Unparen(e).(*ast.SliceExpr)
	return ok && s.isArgs(sl.X)
}

func (s *scanner) isDupTrap(e ast.Expr) bool {
	if s.is(e, "syscall", "SYS_DUP2", "SYS_DUP3") || s.is(e, unixPkg, "SYS_DUP2", "SYS_DUP3") {
		return true
	}
	// dup2 and dup3 on amd64, dup3 on arm64.
	n, ok := s.intValue(e)
	return ok && (n == 33 || n == 292 || n == 24)
}

// stdTarget names the descriptor a dup makes, when it may be stdout or
// stderr: 1 or 2, syscall.Stdout, os.Stdout.Fd(), or one computed at run
// time (which could be either). "" for another constant.
func (s *scanner) stdTarget(e ast.Expr) string {
	e = s.stripConversions(e)
	if n, ok := s.intValue(e); ok {
		if n == 1 || n == 2 {
			return fmt.Sprintf("fd %d", n)
		}
		return ""
	}
	if s.is(e, "syscall", "Stdout", "Stderr") || s.is(e, unixPkg, "Stdout", "Stderr") {
		return "the standard output or error"
	}
	if c, ok := e.(*ast.CallExpr); ok {
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Fd" && s.isStdStream(sel.X) {
			return s.describe(sel.X)
		}
	}
	return "a descriptor chosen at run time"
}

// stripConversions removes type conversions: int(x), uintptr(x).
func (s *scanner) stripConversions(e ast.Expr) ast.Expr {
	for {
		c, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok || len(c.Args) != 1 || !s.info.Types[c.Fun].IsType() {
			return ast.Unparen(e)
		}
		e = c.Args[0]
	}
}

func (s *scanner) intValue(e ast.Expr) (int64, bool) {
	tv, ok := s.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(tv.Value)
}

func (s *scanner) stringValue(e ast.Expr) (string, bool) {
	tv, ok := s.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// constString checks a constant string expression: a test flag, the test
// binary's name suffix, or /proc/self, however it is put together from
// constants.
func (s *scanner) constString(e ast.Expr) {
	v, ok := s.stringValue(e)
	if !ok {
		return
	}
	switch {
	case testFlag.MatchString(v):
		s.add(e.Pos(), fmt.Sprintf("the test flag %q", v))
	case strings.HasSuffix(v, ".test") || strings.HasSuffix(v, ".test.exe"):
		s.add(e.Pos(), fmt.Sprintf("the test binary's name suffix %q", v))
	case procSelf(v):
		s.add(e.Pos(), fmt.Sprintf("self inspection: %q", v))
	case v == "/proc" || v == "/proc/":
		s.procDir = e.Pos()
	case v == "self" || v == "thread-self" || strings.HasPrefix(v, "self/") || strings.HasPrefix(v, "thread-self/"):
		s.selfName = e.Pos()
	}
}

func procSelf(v string) bool {
	return strings.Contains(v, "/proc/self") || strings.Contains(v, "/proc/thread-self")
}

// procBuilt finds /proc/self put together at run time in one expression:
// "/proc/" joined with "self" or with the process's own id
// (fmt.Sprintf("/proc/%d/exe", os.Getpid()), filepath.Join("/proc",
// strconv.Itoa(os.Getpid()), "exe")).
func (s *scanner) procBuilt(n *ast.CallExpr) {
	if n.Pos() < s.procUntil {
		return
	}
	var proc, self bool
	ast.Inspect(n, func(m ast.Node) bool {
		e, ok := m.(ast.Expr)
		if !ok {
			return true
		}
		if v, ok := s.stringValue(e); ok {
			proc = proc || strings.HasPrefix(v, "/proc")
			for _, el := range strings.Split(v, "/") {
				self = self || el == "self" || el == "thread-self"
			}
			return false
		}
		if c, ok := e.(*ast.CallExpr); ok {
			if p, name, ok := s.ref(c.Fun); ok && pids[p][name] {
				self = true
			}
		}
		return true
	})
	if proc && self {
		s.add(n.Pos(), "self inspection: /proc/self built at run time")
		s.procUntil = n.End()
	}
}

// cmdLiteral finds exec.Cmd{Path: os.Args[0]}.
func (s *scanner) cmdLiteral(n *ast.CompositeLit) {
	if !s.is(n.Type, "os/exec", "Cmd") {
		return
	}
	for _, el := range n.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Path") && s.refersToArgv(kv.Value) {
			s.add(n.Pos(), "re-runs the test binary (os.Args)")
			return
		}
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// dedupe keeps one tell per line and kind, in source order.
func dedupe(ts []tell) []tell {
	seen := map[string]bool{}
	var out []tell
	for _, t := range ts {
		k := fmt.Sprintf("%d\x00%s", t.pos, t.what)
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}
