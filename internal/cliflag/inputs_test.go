package cliflag

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

func TestInputs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Inputs
		bad  bool
	}{
		{args: []string{"--input", "task=fix Add", "--input", "remote=/tmp/r.git"}, want: Inputs{"task": "fix Add", "remote": "/tmp/r.git"}},
		{args: []string{"--input", "q=a=b", "--input", "empty="}, want: Inputs{"q": "a=b", "empty": ""}},
		{args: []string{"--input", "k=1", "--input", "k=2"}, want: Inputs{"k": "2"}},
		{args: []string{"--input", "novalue"}, bad: true},
		{args: []string{"--input", "=v"}, bad: true},
	} {
		in := Inputs{}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(in, "input", "")
		err := fs.Parse(tc.args)
		if tc.bad != (err != nil) || !tc.bad && !reflect.DeepEqual(in, tc.want) {
			t.Errorf("%q: %v %v, want %v (error: %v)", tc.args, in, err, tc.want, tc.bad)
		}
	}
}
