package main

import (
	"strings"
	"testing"
)

// hostileBlueprint is a blueprint a hostile repository ships: its name,
// description and an edge's condition (double-quoted YAML, where \e is
// ESC) erase the line and write a fake verdict, write the clipboard and
// reverse the text.
const hostileBlueprint = `version: 1
name: "evil\e[2K\rok: every gate passed\u202e"
description: "d\e]52;c;Y3VybCBldmlsfHNo\a"
start: check
nodes:
  check:
    type: shell
    run: "true"
    edges:
      - {to: stuck, when: "outcome == \"\e[2K\rpass\u202e\""}
      - {to: stuck}
  stuck: {type: handoff, reason: "r\e[1A\u202e"}
`

// TestBlueprintTextCannotSteerTheOperator: what `sandgate validate` and
// `sandgate graph` (Mermaid and DOT) print of a repository's blueprint reaches the
// terminal as data, on stdout as on stderr.
func TestBlueprintTextCannotSteerTheOperator(t *testing.T) {
	bp := writeBlueprint(t, hostileBlueprint)
	for _, args := range [][]string{{"validate", bp}, {"validate", "--json", bp}, {"graph", bp}, {"graph", "--format", "dot", bp}} {
		code, out, errs := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", args, code, out, errs)
		}
		terminalSafe(t, strings.Join(args, " "), out+errs)
	}
	_, out, _ := runCLI("validate", bp)
	if !strings.Contains(out, `evil\x1b[2K\rok: every gate passed\u202e`) {
		t.Errorf("validate does not write the name out visibly: %q", out)
	}
}
