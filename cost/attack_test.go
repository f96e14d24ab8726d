package cost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookupPricesOnlySnapshots attacks budget.cost with model names that
// extend a priced name but are other, dearer models (o3-pro costs ten
// times o3): only a dated snapshot of a priced model takes its price;
// anything else is unpriced, so a cost budget refuses it before the run.
func TestLookupPricesOnlySnapshots(t *testing.T) {
	d := Defaults()
	for model, want := range map[string]bool{
		"o3-pro": false, "o3-deep-research": false, "gpt-4o-audio-preview": false,
		"gpt-4.1-mini-high": false, "o3-2025-04-16": true, "gpt-4o-2024-08-06": true,
		"gpt-4o-mini-2024-07-18": true, "o4-mini-20250416": true, "o3-2025-04": false,
	} {
		if _, ok := d.Lookup(model); ok != want {
			t.Errorf("Lookup(%q) found=%v, want %v", model, ok, want)
		}
	}
}

// TestLoadRefusesNonFinitePrices: a NaN price makes every comparison with
// the budget false, so the budget would never stop a run.
func TestLoadRefusesNonFinitePrices(t *testing.T) {
	dir := t.TempDir()
	for i, body := range []string{"m: {input: .nan, output: 1}\n", "m: {input: 1, output: .inf}\n", "m: {input: 1, output: 1, cached_input: .NaN}\n"} {
		p := filepath.Join(dir, "p"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "model m") {
			t.Errorf("%q: loaded (%v); want a refusal naming the model", body, err)
		}
	}
}
