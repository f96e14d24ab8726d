package inbox

import (
	"encoding/json"
	"slices"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/inbox/index"
	"github.com/sandgate/sandgate/internal/shellquote"
)

// handoffCLI is what a person at a shell needs for a hand-off: the
// takeover commands of handoff.json, and the `sandgate answer` line.
type handoffCLI struct {
	Takeover, Fetch []string
	Answer          string
}

// answerForm is the answer form of a hand-off: the nodes an answer may
// resume at, the one handoff.json recommends (preselected: the blueprint's
// first node is rarely where the note is needed), and the answers left.
type answerForm struct {
	Root        int
	ID, CSRF    string
	To          []string
	Recommended string
	// Left is handoff.json's answers_left; Known says it had one.
	Left  int
	Known bool
}

// handoffOf reads handoff.json for the form and the shell commands.
func handoffOf(d *runDir, root int, bp *blueprint.Blueprint, csrf string) (*answerForm, *handoffCLI) {
	f := &answerForm{Root: root, ID: d.id, CSRF: csrf, To: answerNodes(bp)}
	c := &handoffCLI{}
	var h struct {
		Takeover, Fetch []string
		AnswerTo        string `json:"answer_to"`
		AnswersLeft     *int   `json:"answers_left"`
	}
	if b, _, err := index.ReadCapped(d.Root, "handoff.json", 4<<20); err == nil && json.Unmarshal(b, &h) == nil {
		c.Takeover, c.Fetch = h.Takeover, h.Fetch
		if h.AnswersLeft != nil {
			f.Left, f.Known = *h.AnswersLeft, true
		}
	}
	f.Recommended = recommended(bp, f.To, h.AnswerTo)
	if f.Known && f.Left == 0 {
		f.To = nil // the runtime would refuse any answer
	}
	node := f.Recommended
	if node == "" {
		node = "NODE"
	}
	c.Answer = "sandgate answer " + shellquote.Quote(d.path) + " --to " + shellquote.Quote(node) + " --note '…'"
	return f, c
}

// recommended is handoff.json's answer_to when it names a node the form
// offers; for a hand-off written before answer_to existed, the first agent
// node (where the runtime's own recommendation lands without an exhausted
// edge), else the first node offered.
func recommended(bp *blueprint.Blueprint, to []string, fromJSON string) string {
	if slices.Contains(to, fromJSON) {
		return fromJSON
	}
	for _, id := range to {
		if bp.Nodes[id].Type == "agent" {
			return id
		}
	}
	if len(to) > 0 {
		return to[0]
	}
	return ""
}
