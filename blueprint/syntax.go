package blueprint

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports a YAML syntax error at the line where it really is.
// yaml.v3 sometimes names an earlier line (a bad indent on line 5 reported
// as line 2), so the error line is found again as the shortest prefix of
// the file, in whole lines, that no longer parses.
func syntaxError(r *reporter, src []byte, err error) {
	msg := err.Error()
	reported := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := firstBadLine(src)
	if line == 0 {
		line = reported
	}
	if line == 0 {
		line = 1
	}
	col := 1
	if line <= len(r.lines) {
		l := r.lines[line-1]
		col = len(l) - len(strings.TrimLeft(l, " ")) + 1
		if i := strings.IndexByte(l, '\t'); i >= 0 && strings.Contains(msg, "cannot start any token") {
			col = i + 1
			msg = "tab character: YAML indents with spaces only"
		}
	}
	r.errorf(Pos{line, col}, "", "syntax error: %s", msg)
}

// maxRelocateLines bounds the files whose syntax errors are re-located:
// each step of the search parses a prefix, and a blueprint is a page or
// two, not the 30,000 lines a hostile 1 MiB file can hold.
const maxRelocateLines = 5000

// firstBadLine returns the 1-based number of the first line L such that the
// file's first L lines fail to parse, found by binary search; 0 when every
// prefix parses (the error is only visible at the end of the input).
func firstBadLine(src []byte) int {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > maxRelocateLines {
		return 0 // yaml's own line: the search would parse a huge file a score of times
	}
	bad := func(n int) bool {
		var doc yaml.Node
		return yaml.Unmarshal(bytes.Join(lines[:n], nil), &doc) != nil
	}
	if !bad(len(lines)) {
		return 0
	}
	lo, hi := 1, len(lines) // invariant: bad(hi)
	for lo < hi {
		mid := (lo + hi) / 2
		if bad(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}
