package gocanary

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// FuzzDecode: whatever a test binary prints, Decode does not panic, and a
// sealed test never reads passed in a clean report without a problem
// unless the raw report showed its token as often.
func FuzzDecode(f *testing.F) {
	f.Add(string(stream(steps(canariesOK, runs("TestAdd", "pass", "3 4"), []string{"output  FAIL", "fail"})...)))
	f.Add(string(stream(steps(runs("TestF", "pass"), runs("TestAdd", "pass"))...)))
	f.Add("{\"Action\":\"pass\",\"Package\":\"calc\",\"Test\":\"TestAdd\"}\nnot json\n{")
	f.Fuzz(func(t *testing.T, out string) {
		res, problems := sealedPlan().Decode(&sandbox.Result{Output: []byte(out), ExitCode: 1})
		if len(problems) > 0 {
			return
		}
		passes, tokens := 0, 0
		for _, line := range strings.Split(string(res.Output), "\n") {
			var e event
			if json.Unmarshal([]byte(line), &e) == nil && e.Package == "calc" && e.Test == "TestAdd" && e.Action == "pass" {
				passes++
			}
		}
		for _, line := range strings.Split(out, "\n") {
			var e event
			if json.Unmarshal([]byte(line), &e) == nil && e.Package == "calc" && e.Test == "TestAdd" && e.Action == "output" && strings.Contains(e.Output, "3 4") {
				tokens++
			}
		}
		if passes > tokens {
			t.Fatalf("%d unearned passes of TestAdd accepted:\n%s", passes-tokens, out)
		}
	})
}

// FuzzForPackages: any argv either is refused or keeps its flags and
// -args tail and names exactly the packages given.
func FuzzForPackages(f *testing.F) {
	f.Add("go test -json -run X ./... -count=1 -args -v")
	f.Add("go test -C x ./...")
	f.Fuzz(func(t *testing.T, line string) {
		words, ok := shellWords(line)
		if !ok {
			return
		}
		out, ok := forPackages(words, []string{"pkg/a"})
		if !ok {
			return
		}
		_, pkgs, rest, ok := goTestArgs(out[2:])
		if !ok || len(pkgs) != 1 || pkgs[0] != "pkg/a" {
			t.Fatalf("%q became %q: packages %q (ok %v)", line, out, pkgs, ok)
		}
		_, _, origRest, _ := goTestArgs(words[2:])
		if strings.Join(rest, " ") != strings.Join(origRest, " ") {
			t.Fatalf("%q lost its -args tail: %q", line, out)
		}
	})
}
