package gocanary

import (
	"regexp"
	"strings"
)

// A forger need not forge a pass: it can delete every line of a test
// that failed, and a report that never names a test claims nothing the
// seals could refuse. So each stashed binary's tests are listed in the
// first phase, before any of the change's code runs, from the test main
// go test generated for it (_testmain.go, beside the binary), and every
// listed test the command selects must have a result in the report.
// Which tests the command selects is decided here, from its -run and
// -skip patterns, as the testing package decides it for top-level tests.

// selection is which top-level tests a go test command runs.
type selection struct {
	known     bool // false: the command could not be read; nothing is required
	run, skip [][]*regexp.Regexp
}

// selectionOf reads the -run and -skip flags of a go test command (args
// as Run takes them). A command it cannot read, or whose binary gets
// flags after -args, selects what it may: known is false.
func selectionOf(args []string) selection {
	a, ok := argv(args)
	if !ok || len(a) < 2 {
		return selection{}
	}
	flags, _, rest, ok := goTestArgs(a[2:])
	if !ok || len(rest) > 1 {
		return selection{}
	}
	s := selection{known: true}
	for i := 0; i < len(flags); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		if name != "run" && name != "skip" {
			continue
		}
		if !hasValue && i+1 < len(flags) {
			i++
			value = flags[i]
		}
		f, err := splitRegexp(value)
		if err != nil {
			return selection{} // the binary refuses it and fails
		}
		if name == "run" {
			s.run = f
		} else {
			s.skip = f
		}
	}
	return s
}

// runs reports whether the command runs the top-level test name. As in
// the testing package: it must match the first element of one of -run's
// alternatives, and is skipped when the first alternative of -skip whose
// first element it matches has no further element.
func (s selection) runs(name string) bool {
	if s.run != nil && !s.firstMatch(s.run, name, func([]*regexp.Regexp) bool { return true }) {
		return false
	}
	return s.skip == nil || !s.firstMatch(s.skip, name, func(alt []*regexp.Regexp) bool { return len(alt) == 1 })
}

// firstMatch applies then to the first alternative of f whose first
// element matches name; false when none does.
func (selection) firstMatch(f [][]*regexp.Regexp, name string, then func([]*regexp.Regexp) bool) bool {
	for _, alt := range f {
		if alt[0].MatchString(name) {
			return then(alt)
		}
	}
	return false
}

// splitRegexp splits a -run or -skip pattern as testing does: on | into
// alternatives and on / into elements, except inside brackets or
// parentheses or after a backslash. An empty pattern selects everything
// (nil).
func splitRegexp(s string) ([][]*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	var alts [][]string
	var cur []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			brackets = max(brackets-1, 0) // an unmatched ] is legal
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				cur = append(cur, s[:i])
				if s[i] == '|' {
					alts, cur = append(alts, cur), nil
				}
				s, i = s[i+1:], 0
				continue
			}
		}
		i++
	}
	alts = append(alts, append(cur, s))
	out := make([][]*regexp.Regexp, len(alts))
	for i, alt := range alts {
		for _, el := range alt {
			re, err := regexp.Compile(el)
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], re)
		}
	}
	return out, nil
}
