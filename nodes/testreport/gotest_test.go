package testreport_test

import (
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/testreport"
)

// ev builds one go test -json line.
func ev(action, pkg, test, output string) string {
	s := `{"Action":"` + action + `","Package":"` + pkg + `"`
	if test != "" {
		s += `,"Test":"` + test + `"`
	}
	if output != "" {
		s += `,"Output":` + strings.ReplaceAll(strings.ReplaceAll(`"`+output+`"`, "\t", `\t`), "\n", `\n`)
	}
	return s + "}\n"
}

// TestParseGoTestJSONEvidence: streams that end early, tests that never
// report, damaged lines and silenced packages are problems, never passes.
func TestParseGoTestJSONEvidence(t *testing.T) {
	passing := ev("start", "m/a", "", "") + ev("run", "m/a", "TestA", "") + ev("pass", "m/a", "TestA", "") + ev("pass", "m/a", "", "")
	cases := []struct {
		name, stream string
		allow        []string
		failed       int
		want         string // in a problem or failure; "" means no problem
	}{
		{"passing", passing, nil, 0, ""},
		{"no test files", passing + ev("start", "m/b", "", "") + ev("output", "m/b", "", "?   \tm/b\t[no test files]\n") + ev("skip", "m/b", "", ""), nil, 0, ""},
		{"silenced package", passing + ev("start", "m/b", "", "") + ev("output", "m/b", "", "ok  \tm/b\t0.01s\n") + ev("pass", "m/b", "", ""), nil, 0, "package m/b ran no test"},
		{"silenced package allowed", passing + ev("output", "m/b", "", "ok  \tm/b\t0.01s\n") + ev("pass", "m/b", "", ""), []string{"m/..."}, 0, ""},
		{"forged no test files", passing + ev("output", "m/b", "", "?   \tm/b\t[no test files]\n") + ev("output", "m/b", "", "ok  \tm/b\t0.01s\n") + ev("skip", "m/b", "", ""), nil, 0, "package m/b ran no test"},
		{"all tests skipped", passing + ev("run", "m/b", "TestB", "") + ev("skip", "m/b", "TestB", "") + ev("pass", "m/b", "", ""), nil, 0, "all 1 of its tests were skipped"},
		{"stream ends before the result", passing + ev("start", "m/b", "", "") + ev("run", "m/b", "TestB", "") + ev("output", "m/b", "TestB", "working\n"), nil, 1, "package m/b: the output ended"},
		{"test never reports", passing + ev("run", "m/b", "TestB", "") + ev("fail", "m/b", "", ""), nil, 1, "never reported a result"},
		{"a failure sticks under -count", passing + ev("run", "m/b", "TestB", "") + ev("fail", "m/b", "TestB", "") + ev("run", "m/b", "TestB", "") + ev("pass", "m/b", "TestB", "") + ev("fail", "m/b", "", ""), nil, 1, "TestB"},
		{"damaged line", passing + `{"Action":"fail","Package":"m/a","Test":"TestX"` + "\n", nil, 0, "could not be read"},
		{"build failure keeps the compiler's message", passing + `{"ImportPath":"m/b [m/b.test]","Action":"build-output","Output":"b.go:1:1: syntax error\n"}` + "\n" +
			`{"Action":"fail","Package":"m/b","FailedBuild":"m/b [m/b.test]"}` + "\n", nil, 0, "b.go:1:1: syntax error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := testreport.ParseGoTestJSON(c.stream)
			if err != nil {
				t.Fatal(err)
			}
			r.CheckPackages(c.allow)
			text := strings.Join(r.Problems, "\n")
			for _, f := range r.Failures {
				text += "\n" + f.Name + ": " + f.Output
			}
			if r.Failed != c.failed || (c.want == "") != (len(r.Problems)+r.Failed == 0) || !strings.Contains(text, c.want) {
				t.Fatalf("failed %d (want %d), problems and failures:\n%s\nwant %q", r.Failed, c.failed, text, c.want)
			}
		})
	}
}

// TestParseGoTestJSONLongStream: a stream of any length is counted whole
// (one name run many times, as with -count, counts each run) and a
// failing test's output is kept only as a tail.
func TestParseGoTestJSONLongStream(t *testing.T) {
	var b strings.Builder
	for range 20000 {
		b.WriteString(ev("run", "m/a", "TestA", "") + ev("output", "m/a", "TestA", strings.Repeat("x", 500)+"\n") + ev("pass", "m/a", "TestA", ""))
	}
	b.WriteString(ev("run", "m/a", "TestZ", ""))
	for range 1000 {
		b.WriteString(ev("output", "m/a", "TestZ", strings.Repeat("y", 500)+"\n"))
	}
	b.WriteString(ev("output", "m/a", "TestZ", "the reason\n") + ev("fail", "m/a", "TestZ", "") + ev("fail", "m/a", "", ""))
	r, err := testreport.ParseGoTestJSON(b.String())
	if err != nil || r.Passed != 20000 || r.Failed != 1 || len(r.Failures[0].Output) > 5000 || !strings.HasSuffix(r.Failures[0].Output, "the reason\n") {
		t.Fatalf("%d bytes: %+v %v", b.Len(), r, err)
	}
}
