package cost

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2, Output: 8, CachedInput: 0.5}
	cases := []struct {
		name            string
		in, out, cached int
		want            float64
	}{
		{"plain", 1_000_000, 0, 0, 2},
		{"output", 0, 500_000, 0, 4},
		{"half cached", 1_000_000, 0, 500_000, 1.25},
		{"cached beyond input is clamped", 1000, 0, 5000, 0.0005},
	}
	for _, c := range cases {
		if got := p.Cost(c.in, c.out, c.cached); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: cost %v, want %v", c.name, got, c.want)
		}
	}
	if got := (Price{Input: 1}).Cost(1_000_000, 0, 1_000_000); got != 1 {
		t.Errorf("no cached rate: cached input costs %v, want the input rate 1", got)
	}
}

func TestLookup(t *testing.T) {
	d := Defaults()
	for model, want := range map[string]bool{"gpt-4.1": true, "gpt-4.1-2025-04-14": true, "gpt-4.1-mini-2025-04-14": true, "claude-x": false, "gpt-4.10": false} {
		p, ok := d.Lookup(model)
		if ok != want {
			t.Errorf("Lookup(%q) found=%v, want %v", model, ok, want)
		}
		if model == "gpt-4.1-mini-2025-04-14" && p != d["gpt-4.1-mini"] {
			t.Errorf("dated mini priced as %+v, want the mini's price (longest prefix)", p)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tab, err := Load(write("p.yaml", "my-model: {input: 1.5, output: 3}\ngpt-4.1: {input: 9, output: 9}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tab["my-model"] != (Price{Input: 1.5, Output: 3}) || tab["gpt-4.1"].Input != 9 || tab["gpt-4o"].Input == 0 {
		t.Errorf("loaded table %+v: want the file over the defaults", tab)
	}
	tab, err = Load(write("p.json", `{"j": {"input": 1, "output": 2, "cached_input": 0.5}}`))
	if err != nil || tab["j"].CachedInput != 0.5 {
		t.Errorf("json table %+v, %v", tab["j"], err)
	}
	for name, body := range map[string]string{"typo.yaml": "m: {inptu: 1}\n", "neg.yaml": "m: {input: -1}\n", "bad.json": "{"} {
		if _, err := Load(write(name, body)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	env := map[string]string{EnvPrices: write("e.yaml", "e: {input: 1, output: 1}\n")}
	tab, err = FromEnv("", func(k string) string { return env[k] })
	if _, ok := tab["e"]; err != nil || !ok {
		t.Errorf("SANDGATE_PRICES not read: %v", err)
	}
}
