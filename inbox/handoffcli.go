package inbox

import (
	"encoding/json"
	"strings"
)

// handoffCLI is what a person at a shell needs for a hand-off: the
// takeover commands of handoff.json, and the `sandgate answer` line.
type handoffCLI struct {
	Takeover, Fetch []string
	Answer          string
}

func cliOf(d *runDir, answerTo []string) *handoffCLI {
	c := &handoffCLI{}
	if b, _, err := readCapped(d.Root, "handoff.json", 4<<20); err == nil {
		var h struct{ Takeover, Fetch []string }
		if json.Unmarshal(b, &h) == nil {
			c.Takeover, c.Fetch = h.Takeover, h.Fetch
		}
	}
	node := "NODE"
	if len(answerTo) > 0 {
		node = answerTo[0]
	}
	c.Answer = "sandgate answer " + shellQuote(d.path) + " --to " + shellQuote(node) + " --note '…'"
	return c
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=,", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
