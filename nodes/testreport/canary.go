package testreport

import (
	"fmt"
	"slices"
)

// tally is one top-level test's results over all its runs (-count).
type tally struct{ pass, fail, skip int }

func (n tally) status() string {
	switch {
	case n.pass > 0:
		return "passed"
	case n.skip > 0:
		return "skipped"
	case n.fail > 0:
		return "failed"
	}
	return "missing (it never ran)"
}

// Canary is a test the harness compiled into package Package (an import
// path) that always fails: the test gate adds one to every package it
// can test, so that a report in which it did not fail is known to be
// forged by the test binary.
type Canary struct{ Package, Name string }

// DropCanaries checks that every canary of a package that ran failed, and
// takes the canaries out of the report, so they count neither as failures
// nor as the package's failure. It reports whether any was dropped.
func (r *Report) DropCanaries(cs []Canary) bool {
	dropped := false
	for _, c := range cs {
		i := slices.IndexFunc(r.Packages, func(p GoPackage) bool { return p.Path == c.Package })
		if i < 0 || r.Packages[i].Result == "" || r.Packages[i].failedBuild != "" {
			continue // not tested, cut off or not built: reported on its own
		}
		p := &r.Packages[i]
		key := c.Package + "\x00" + c.Name
		n := r.top[key]
		if n.fail == 0 || n.pass > 0 || n.skip > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("the test binary's report for package %s is forged: the gate's canary test %s, which always fails, was reported %s; none of the package's results is believed",
				c.Package, c.Name, n.status()))
			continue
		}
		r.Failed, p.Failed = r.Failed-n.fail, p.Failed-n.fail
		r.Failures = slices.DeleteFunc(r.Failures, func(f Failure) bool { return f.Package == c.Package && f.Name == c.Name })
		delete(r.ranTop, key)
		if p.Result == "fail" && p.Failed == 0 {
			p.Result = "pass"
		}
		dropped = true
	}
	return dropped
}
