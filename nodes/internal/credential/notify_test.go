package credential_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/nodes/internal/credential"
)

// TestLedgerNotify: the ledger tells its Notify hook of each token minted
// and revoked (the run's alert sinks hear of them through it), naming the
// node, purpose and repository and never the token.
func TestLedgerNotify(t *testing.T) {
	gh, cfg, _ := newApp(t)
	in, dir := input(t)
	var heard []string
	ledger := credential.NewLedger(dir)
	ledger.Notify = func(event, node, purpose, repo, errText string) {
		heard = append(heard, fmt.Sprintf("%s %s %s %s %s", event, node, purpose, repo, errText))
	}
	credential.ServiceLedger.Set(&in.Services, ledger)
	lease, err := credential.NewLease(context.Background(), in, cfg, []string{gh.API.URL}, credential.Push, "acme/calc")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Token()
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"minted push git_push acme/calc ", "revoked    "}
	if !slices.Equal(heard, want) {
		t.Errorf("heard %q, want %q", heard, want)
	}
	if strings.Contains(strings.Join(heard, "\n"), tok) {
		t.Error("the hook was told the token")
	}
}
