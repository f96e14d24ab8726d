package trigger

import (
	"strings"
	"testing"
)

// TestTriggerConfigProblems: every problem of a trigger file is reported,
// each positioned; a secret's value where a variable's name belongs is
// one of them.
func TestTriggerConfigProblems(t *testing.T) {
	src := `version: 2
public_url: inbox.example.com
max_runs: 0
colour: blue
github:
  secret_env: "s3cr3t value!"
  token_env: GH_TOKEN
  repositories:
    - name: not-a-repo
      label: sandgate
      users: [ana]
      blueprints: [chore, nope]
slack:
  signing_secret_env: SLACK_SECRET
  teams: T1
  channels: [C1]
  users: [U1]
  blueprints: [chore]
`
	_, err := Parse("t.yaml", []byte(src), func(n string) bool { return n == "chore" })
	if err == nil {
		t.Fatal("a broken file loaded")
	}
	want := []string{
		"t.yaml:1:10: version: want 1",
		`t.yaml:2:13: public_url: "inbox.example.com" is not an http(s) URL`,
		"t.yaml:3:11: max_runs: want a whole number from 1 to 1000",
		"t.yaml:4:1: colour: unknown field",
		"t.yaml:6:15: github.secret_env: want the name of an environment variable, not a value (the file never holds a secret)",
		`t.yaml:9:13: github.repositories[0].name: "not-a-repo" is not owner/name`,
		`t.yaml:12:27: github.repositories[0].blueprints[1]: no blueprint "nope" to start (the shipped ones and --blueprints-dir's)`,
		"t.yaml:9:7: github.repositories[0]: label and label_blueprint go together",
		"t.yaml:15:10: slack.teams: want a list",
	}
	got := strings.Split(err.Error(), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// TestTriggerCommandWords: the command's words are names and values only.
func TestTriggerCommandWords(t *testing.T) {
	name, in, err := parseCommand(` chore  task="a  b" ticket=OPS-1 empty=`)
	if err != nil || name != "chore" || len(in) != 3 || in["task"] != "a  b" || in["ticket"] != "OPS-1" || in["empty"] != "" {
		t.Fatalf("%q %v %v", name, in, err)
	}
	for _, bad := range []string{"-x", "chore --model=x", "chore a=1 a=2", "chore =x", `chore "x`} {
		if _, _, err := parseCommand(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
