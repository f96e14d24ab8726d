package inbox

import (
	"encoding/json"

	"github.com/sandgate/sandgate/internal/shellquote"
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
	c.Answer = "sandgate answer " + shellquote.Quote(d.path) + " --to " + shellquote.Quote(node) + " --note '…'"
	return c
}
