package gocanary

import "strings"

// A box's disk holds its caches and everything its commands write (4 GiB
// by default), and plain go test keeps a test binary only while it runs:
// stashing every binary of a large repository could fill it. So the
// collector stops stashing when the disk runs low and defers the rest,
// and Run builds and runs the deferred packages in another round, with
// the command's package arguments replaced by their import paths. That
// needs the command's flags told from its packages, which is what this
// file does, by go test's own flag table; a command it cannot read is run
// in one round.

// valueFlags are go test's flags (build and test) that take a value in
// the next argument when written without "=".
var valueFlags = set(`p asmflags buildmode compiler gccgoflags gcflags installsuffix ldflags mod modfile
	overlay pgo pkgdir tags toolexec covermode coverpkg exec o vet bench benchtime blockprofile
	blockprofilerate count coverprofile cpu cpuprofile fuzz fuzzminimizetime fuzztime list memprofile
	memprofilerate mutexprofile mutexprofilefraction outputdir parallel run skip shuffle timeout trace`)

// boolFlags are go test's flags that take no separate value.
var boolFlags = set(`a n x v work race msan asan cover trimpath linkshared modcacherw buildvcs json short
	failfast benchmem fullpath c i artifacts`)

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

// goTestArgs splits a go test argv (after "go test") into its flags, its
// package arguments and what follows -args; ok is false for a flag it
// does not know (or -C, which moves the command elsewhere).
func goTestArgs(args []string) (flags, pkgs, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			return flags, pkgs, args[i:], true
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pkgs = append(pkgs, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		switch {
		case boolFlags[name] || (valueFlags[name] && hasValue):
			flags = append(flags, a)
		case valueFlags[name] && i+1 < len(args):
			flags = append(flags, a, args[i+1])
			i++
		default:
			return nil, nil, nil, false
		}
	}
	return flags, pkgs, nil, true
}

// shellWords splits a shell line without expansions (plain words,
// '...' and "..." without $, ` or \) into its words; ok is false for
// anything else.
func shellWords(line string) ([]string, bool) {
	if strings.ContainsAny(line, "$`\\;&|<>()\n") {
		return nil, false
	}
	var out []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if in {
		out = append(out, w.String())
	}
	return out, true
}

// argv is a go test command as an argv: args as the box takes them (an
// argv, or sh -c with a shell line).
func argv(args []string) ([]string, bool) {
	if len(args) == 3 && args[0] == "sh" && args[1] == "-c" {
		return shellWords(args[2])
	}
	return args, len(args) > 1 && args[0] == "go" && args[1] == "test"
}

// forPackages is the go test argv with its package arguments replaced by
// pkgs; ok is false when the command cannot be read (see goTestArgs).
func forPackages(args []string, pkgs []string) ([]string, bool) {
	a, ok := argv(args)
	if !ok || len(a) < 2 || a[0] != "go" || a[1] != "test" {
		return nil, false
	}
	flags, _, rest, ok := goTestArgs(a[2:])
	if !ok {
		return nil, false
	}
	return append(append(append([]string{"go", "test"}, flags...), pkgs...), rest...), true
}
