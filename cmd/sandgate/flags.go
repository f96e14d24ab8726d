package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// flagSet is one subcommand's flags. Parse errors and usage mistakes go to
// stderr with the usage, once, and exit 2; --help prints the usage, once,
// to stdout and exits 0. Old spellings stay accepted as hidden aliases
// (see alias), so every command shows one vocabulary: --runs-dir,
// --reviews-dir, --format.
type flagSet struct {
	*flag.FlagSet
	name, synopsis string
	stdout, stderr io.Writer
	hidden         map[string]bool
}

// newFlags makes a subcommand's flag set; synopsis is what follows the
// command name in its usage line, and may go on with a description.
func newFlags(name, synopsis string, stdout, stderr io.Writer) *flagSet {
	f := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, synopsis: synopsis,
		stdout: stdout, stderr: stderr, hidden: map[string]bool{}}
	f.SetOutput(stderr)
	f.Usage = func() { f.printUsage(stderr) }
	return f
}

// printUsage writes the usage line, the description and the flags that
// are not hidden aliases.
func (f *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: sandgate %s %s\n", f.name, f.synopsis)
	shown := flag.NewFlagSet(f.name, flag.ContinueOnError)
	f.VisitAll(func(fl *flag.Flag) {
		if !f.hidden[fl.Name] {
			shown.Var(fl.Value, fl.Name, fl.Usage)
			shown.Lookup(fl.Name).DefValue = fl.DefValue
		}
	})
	shown.SetOutput(w)
	shown.PrintDefaults()
}

// alias makes old another, hidden, spelling of the flag name.
func (f *flagSet) alias(old, name string) {
	fl := f.Lookup(name)
	f.Var(fl.Value, old, "same as -"+name)
	f.hidden[old] = true
}

// format registers --format with its choices (the first is the default)
// and, when json is one, the hidden --json spelling of --format json.
func (f *flagSet) format(choices ...string) *string {
	v := choices[0]
	f.Var(&choiceFlag{v: &v, choices: choices}, "format", "output: "+strings.Join(choices, " or "))
	if slices.Contains(choices, "json") {
		f.Var(jsonFlag{&v}, "json", "same as -format json")
		f.hidden["json"] = true
	}
	return &v
}

// parse parses flags wherever they appear among the positional arguments,
// so "validate a.yaml --format json" works as users expect. When ok is
// false the command returns code: 0 after --help, 2 after a bad flag.
func (f *flagSet) parse(args []string) (pos []string, code int, ok bool) {
	f.Usage = func() {} // printed below, once, where it belongs
	defer func() { f.Usage = func() { f.printUsage(f.stderr) } }()
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			f.printUsage(f.stdout)
			return nil, exitOK, false
		}
		if err != nil {
			f.printUsage(f.stderr)
			return nil, exitUsage, false
		}
		rest := f.Args()
		if len(rest) == 0 {
			return pos, exitOK, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// given lists the flags set on the command line, by their canonical
// names (an alias counts as its flag).
func (f *flagSet) given() map[string]bool {
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for old := range f.hidden {
		if set[old] {
			// An alias shares its flag's Value: find the flag.
			f.VisitAll(func(fl *flag.Flag) {
				if !f.hidden[fl.Name] && fl.Value == f.Lookup(old).Value {
					set[fl.Name] = true
				}
			})
		}
	}
	return set
}

// parseN parses and requires between min and max positional arguments
// (max < 0: no bound), printing the usage otherwise.
func (f *flagSet) parseN(args []string, min, max int) ([]string, int, bool) {
	pos, code, ok := f.parse(args)
	if !ok {
		return nil, code, false
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return nil, f.usageError(""), false
	}
	return pos, exitOK, true
}

// usageError prints why (when not empty) and the usage to stderr and
// returns the usage exit code.
func (f *flagSet) usageError(why string) int {
	if why != "" {
		fmt.Fprintf(f.stderr, "sandgate %s: %s\n", f.name, why)
	}
	f.printUsage(f.stderr)
	return exitUsage
}

// choiceFlag is a string flag limited to a few values.
type choiceFlag struct {
	v       *string
	choices []string
}

func (c *choiceFlag) String() string {
	if c.v == nil {
		return ""
	}
	return *c.v
}

func (c *choiceFlag) Set(s string) error {
	if !slices.Contains(c.choices, s) {
		return fmt.Errorf("want %s, got %q", strings.Join(c.choices, " or "), s)
	}
	*c.v = s
	return nil
}

// jsonFlag is the old boolean --json: --format json.
type jsonFlag struct{ v *string }

func (j jsonFlag) String() string   { return "false" }
func (j jsonFlag) IsBoolFlag() bool { return true }

func (j jsonFlag) Set(s string) error {
	switch s {
	case "true":
		*j.v = "json"
	case "false":
	default:
		return fmt.Errorf("want true or false, got %q", s)
	}
	return nil
}
