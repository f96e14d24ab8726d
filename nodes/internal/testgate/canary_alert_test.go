package testgate_test

import (
	"testing"

	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/internal/nodetest"
)

// TestAlertCanaryHit: when the seals and canaries catch a forged report,
// the operator's alert sink hears of it from the test node.
func TestAlertCanaryHit(t *testing.T) {
	repo := nodetest.SeedRepo(t)
	rcv := nodetest.NewAlertReceiver(t)
	h := &nodetest.Harness{Repo: repo, RT: nodes.NewRuntime(nodes.Config{RunsDir: t.TempDir(), Repo: repo, CacheDir: t.TempDir(),
		Caches: nodes.GoCaches(), ColdBuilds: true, AlertSinks: []nodes.AlertSink{rcv.Sink()}})}
	sum := h.Run(t, replaceOnce(protectedPipeline, "PREP", nodetest.Quote(writeFiles(map[string]string{"zz_init.go": forgeAllInit}))), nil)
	nodetest.AssertNothingPromoted(t, sum)
	events, _ := rcv.Events()
	if len(events) != 1 || events[0].Kind != "canary" || events[0].Node != "test" || events[0].Text == "" {
		t.Errorf("alerts %+v, want one canary alert from the test node", events)
	}
}
