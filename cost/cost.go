// Package cost prices model calls: a table of USD per million tokens per
// model, given by the operator (--prices FILE or SANDGATE_PRICES) over a
// few shipped defaults. It knows nothing of runs or nodes, so the runtime,
// the agent node and the CLI can all use it.
package cost

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// EnvPrices names the environment variable holding a price file's path.
const EnvPrices = "SANDGATE_PRICES"

// Price is what one model charges, in USD per million tokens. CachedInput
// applies to the input tokens the provider reports as served from its
// prompt cache; zero means cached tokens cost as much as other input.
type Price struct {
	Input       float64 `json:"input" yaml:"input"`
	Output      float64 `json:"output" yaml:"output"`
	CachedInput float64 `json:"cached_input,omitempty" yaml:"cached_input,omitempty"`
}

// Cost is the USD price of one call: in input tokens of which cached were
// cache hits, and out output tokens.
func (p Price) Cost(in, out, cached int) float64 {
	cached = min(max(cached, 0), in)
	cachedRate := p.CachedInput
	if cachedRate == 0 {
		cachedRate = p.Input
	}
	return (float64(in-cached)*p.Input + float64(cached)*cachedRate + float64(out)*p.Output) / 1e6
}

// DefaultsDate is when the shipped prices were copied from the providers'
// pages. Prices change: check your provider, and give your own with
// --prices FILE.
const DefaultsDate = "2025-06-01"

// Defaults are list prices as of DefaultsDate (check your provider). Offline
// models (script:, replay:) are free.
func Defaults() Table {
	return Table{
		"gpt-4.1":      {Input: 2.00, Output: 8.00, CachedInput: 0.50},
		"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CachedInput: 0.10},
		"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CachedInput: 0.025},
		"gpt-4o":       {Input: 2.50, Output: 10.00, CachedInput: 1.25},
		"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CachedInput: 0.075},
		"o3":           {Input: 2.00, Output: 8.00, CachedInput: 0.50},
		"o4-mini":      {Input: 1.10, Output: 4.40, CachedInput: 0.275},
		"script":       {},
		"replay":       {},
	}
}

// Table maps model names to prices.
type Table map[string]Price

// Lookup finds a model's price: its exact name, else the name of which it
// is a dated snapshot (gpt-4.1-2025-04-14 or o4-mini-20250416 is priced
// as gpt-4.1 or o4-mini). Any other extension of a priced name is another
// model, often a dearer one (o3-pro is not o3), so it has no price.
func (t Table) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	m := snapshot.FindStringSubmatchIndex(model)
	if m == nil {
		return Price{}, false
	}
	p, ok := t[model[:m[0]]]
	return p, ok
}

// snapshot matches the date suffix of a model snapshot's name.
var snapshot = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// Models lists the priced model names, sorted.
func (t Table) Models() []string {
	out := make([]string, 0, len(t))
	for m := range t {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Load reads a price file (YAML or JSON: a map from model name to
// {input, output, cached_input}) over the defaults: its models replace the
// shipped ones of the same name.
func Load(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	var file map[string]Price
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if strings.HasSuffix(path, ".json") {
		err = json.Unmarshal(b, &file)
	} else {
		err = dec.Decode(&file)
	}
	if err != nil {
		return nil, fmt.Errorf("prices %s: %w", path, err)
	}
	t := Defaults()
	for name, p := range file {
		if !valid(p.Input) || !valid(p.Output) || !valid(p.CachedInput) {
			return nil, fmt.Errorf("prices %s: model %s: a price is a finite number, not negative", path, name)
		}
		t[name] = p
	}
	return t, nil
}

// valid refuses negative prices and NaN or infinity, which would make
// every comparison with a budget false.
func valid(usd float64) bool { return usd >= 0 && !math.IsInf(usd, 0) }

// FromEnv loads the price file a flag names, else the one SANDGATE_PRICES
// names, else returns the defaults.
func FromEnv(flag string, getenv func(string) string) (Table, error) {
	if flag == "" {
		flag = getenv(EnvPrices)
	}
	if flag == "" {
		return Defaults(), nil
	}
	return Load(flag)
}
