package checks

import (
	"reflect"
	"testing"
)

func TestParseDiagnostics(t *testing.T) {
	cases := []struct {
		name, out string
		want      []string
	}{
		{"go vet", "# calc\nvet: ./calc.go:4:2: unreachable code\n", []string{"calc.go:4:2: unreachable code"}},
		{"gofmt -l", "calc.go\nsub/x.go\n", []string{"calc.go: not formatted (gofmt -l)", "sub/x.go: not formatted (gofmt -l)"}},
		{"golangci-lint", "main.go:12:5: ineffectual assignment to err (ineffassign)\n", []string{"main.go:12:5: ineffectual assignment to err (ineffassign)"}},
		{"ruff", "app.py:3:1: F401 [*] `os` imported but unused\nFound 1 error.\n", []string{"app.py:3:1: F401 [*] `os` imported but unused"}},
		{"ruff clean", "All checks passed!\n", nil},
		{"eslint stylish", "/work/src/a.js\n  2:7  error  'x' is assigned a value but never used  no-unused-vars\n\n✖ 1 problem\n", []string{"/work/src/a.js:2:7: error: 'x' is assigned a value but never used  no-unused-vars"}},
		{"no line", "error: something broke\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range parseDiagnostics(c.out) {
				got = append(got, d.String())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

func FuzzParseDiagnostics(f *testing.F) {
	f.Add("{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}\n1..2\nok 1\n<testsuite/>")
	f.Fuzz(func(t *testing.T, s string) {
		parseDiagnostics(s)
	})
}
