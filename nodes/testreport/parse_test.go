package testreport_test

import (
	"testing"

	"github.com/sandgate/sandgate/nodes/testreport"
)

func TestParseTAP(t *testing.T) {
	r, err := testreport.ParseTAP("TAP version 13\n1..4\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP no db\nok 4 - d # TODO later\n")
	if err != nil || r.Passed != 2 || r.Failed != 1 || r.Skipped != 1 || r.Failures[0].Name != "b" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := testreport.ParseTAP("hello\n"); err == nil {
		t.Fatal("non-TAP output parsed")
	}
}

func TestParseJUnitNested(t *testing.T) {
	r, err := testreport.ParseJUnit([]byte(`<testsuites><testsuite name="s"><testcase name="a" classname="A"/><testcase name="b"><failure message="boom">trace</failure></testcase><testsuite><testcase name="c"><skipped/></testcase><testcase name="d"><error message="err"/></testcase></testsuite></testsuite></testsuites>`))
	if err != nil || r.Passed != 1 || r.Failed != 2 || r.Skipped != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := testreport.ParseJUnit([]byte("<testsuite><testcase")); err == nil {
		t.Fatal("broken XML parsed")
	}
}

func FuzzParseReports(f *testing.F) {
	f.Add("{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}\n1..2\nok 1\n<testsuite/>")
	f.Fuzz(func(t *testing.T, s string) {
		testreport.ParseTAP(s)
		testreport.ParseGoTestJSON(s)
		testreport.ParseJUnit([]byte(s))
	})
}
