package credential_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/credential"
	"github.com/sandgate/sandgate/runtime"
)

// TestLedgerNotify: the ledger tells its Notify hook of each token minted
// and revoked (the run's alert sinks hear of them through it), naming the
// node, purpose and repository (the revocation too) and never the token.
func TestLedgerNotify(t *testing.T) {
	gh, cfg, _ := newApp(t)
	in, dir := input(t)
	ledger, heard := hearing(dir)
	credential.ServiceLedger.Set(&in.Services, ledger)
	lease, tok := pushToken(t, in, gh.API.URL, cfg)
	if err := lease.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"minted push git_push acme/calc ", "revoked push git_push acme/calc "}
	if !slices.Equal(*heard, want) {
		t.Errorf("heard %q, want %q", *heard, want)
	}
	if strings.Contains(strings.Join(*heard, "\n"), tok) {
		t.Error("the hook was told the token")
	}
}

// TestLedgerSweepNotify: the tokens a killed harness left are revoked by
// the next sweep (a resume, the run's end, a prune) through the run's
// ledger, whose Notify hook (the alert sinks) hears of a revocation that
// failed, with the reason, and of the one that worked, naming the token's
// node, purpose and repository, never the token.
func TestLedgerSweepNotify(t *testing.T) {
	gh, cfg, _ := newApp(t)
	in, dir := input(t)
	credential.ServiceLedger.Set(&in.Services, credential.NewLedger(dir))
	_, tok := pushToken(t, in, gh.API.URL, cfg)
	// The harness dies here, its lease never closed. The next one finds
	// the app's key gone at first (moved by the operator), then back.
	ledger, heard := hearing(dir)
	if err := os.Rename(cfg.KeyFile, cfg.KeyFile+".away"); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Sweep(context.Background(), []string{gh.API.URL}); err == nil {
		t.Fatal("a sweep without the app's key revoked the token")
	}
	if err := os.Rename(cfg.KeyFile+".away", cfg.KeyFile); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Sweep(context.Background(), []string{gh.API.URL}); err != nil {
		t.Fatal(err)
	}
	if len(*heard) != 2 || !strings.HasPrefix((*heard)[0], "revoke_failed push git_push acme/calc ") || !strings.Contains((*heard)[0], "app.pem") ||
		(*heard)[1] != "revoked push git_push acme/calc " {
		t.Errorf("heard %q", *heard)
	}
	if strings.Contains(strings.Join(*heard, "\n"), tok) {
		t.Error("the hook was told the token")
	}
	if got := gh.TokenStatus(tok, "", "", ""); got != http.StatusUnauthorized {
		t.Errorf("after the sweep the token answers %d, want 401", got)
	}
}

// hearing is a ledger of the run in dir whose Notify hook writes down
// what it hears.
func hearing(dir string) (*credential.Ledger, *[]string) {
	var heard []string
	ledger := credential.NewLedger(dir)
	ledger.Notify = func(event, node, purpose, repo, errText string) {
		heard = append(heard, fmt.Sprintf("%s %s %s %s %s", event, node, purpose, repo, errText))
	}
	return ledger, &heard
}

// pushToken mints a push token for acme/calc through a lease of in's node.
func pushToken(t *testing.T, in *runtime.Input, api string, cfg credential.AppConfig) (*credential.Lease, string) {
	t.Helper()
	lease, err := credential.NewLease(context.Background(), in, cfg, []string{api}, credential.Push, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	return lease, tok
}
