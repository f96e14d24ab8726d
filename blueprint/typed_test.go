package blueprint_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sandgate/sandgate/blueprint"
)

// probeConfig exercises every kind a config struct may declare.
type probeConfig struct {
	Run     blueprint.Command   `sg:"run,required,notemplate" doc:"command"`
	Checks  []blueprint.Command `sg:"checks" doc:"commands"`
	Mode    string              `sg:"mode,enum=fast|slow,default=fast" doc:"speed"`
	Limit   *int                `sg:"limit" doc:"cap"`
	Retries int                 `sg:"retries,default=3" doc:"tries"`
	Ratio   float64             `sg:"ratio" doc:"ratio"`
	Wait    time.Duration       `sg:"wait,default=2m" doc:"wait"`
	Paths   []string            `sg:"paths,notemplate" doc:"globs"`
	Tools   map[string]string   `sg:"tools" doc:"versions"`
	Token   string              `sg:"token_env,credential,notemplate" doc:"key"`
	URL     string              `sg:"url,endpoint,trusted=https://x.example|https://y.example" doc:"endpoint"`
	Free    any                 `sg:"free" doc:"anything"`
	//lint:ignore U1000 an untagged field is not a key: Configured must skip it
	ignored string
}

// Validate refuses a zero limit written out, at the limit key.
func (c *probeConfig) Validate(n *blueprint.Node) []blueprint.Diagnostic {
	if c.Limit != nil && *c.Limit == 0 {
		return []blueprint.Diagnostic{n.ErrorAt("limit", -1, "a zero limit checks nothing")}
	}
	return nil
}

var probeType = blueprint.Configured[probeConfig](blueprint.NodeType{Name: "probe", Doc: "probe"})

func TestConfiguredDerivesFields(t *testing.T) {
	want := map[string]blueprint.Field{
		"run":       {Kind: blueprint.KindCommand, Required: true, NoTemplate: true, Doc: "command"},
		"checks":    {Kind: blueprint.KindCommandList, Doc: "commands"},
		"mode":      {Kind: blueprint.KindString, Enum: []string{"fast", "slow"}, Default: "fast", Doc: "speed"},
		"limit":     {Kind: blueprint.KindInt, Doc: "cap"},
		"retries":   {Kind: blueprint.KindInt, Default: "3", Doc: "tries"},
		"ratio":     {Kind: blueprint.KindFloat, Doc: "ratio"},
		"wait":      {Kind: blueprint.KindDuration, Default: "2m", Doc: "wait"},
		"paths":     {Kind: blueprint.KindStringList, NoTemplate: true, Doc: "globs"},
		"tools":     {Kind: blueprint.KindStringMap, Doc: "versions"},
		"token_env": {Kind: blueprint.KindString, CredentialEnv: true, NoTemplate: true, Doc: "key"},
		"url":       {Kind: blueprint.KindString, Endpoint: true, Trusted: []string{"https://x.example", "https://y.example"}, Doc: "endpoint"},
		"free":      {Kind: blueprint.KindAny, Doc: "anything"},
	}
	if !reflect.DeepEqual(probeType.Fields, want) {
		t.Fatalf("fields:\n got %+v\nwant %+v", probeType.Fields, want)
	}
	if probeType.Check == nil {
		t.Fatal("a Validator config did not become the type's Check")
	}
}

func TestDecodeTyped(t *testing.T) {
	src := "version: 1\nname: t\nstart: p\nnodes:\n" +
		"  p: {type: probe, run: {argv: [go, test]}, checks: [make, {argv: [vet]}], limit: 5, ratio: 0.5, paths: [a], tools: {go: \"1.26\"}, free: [1], next: q}\n" +
		"  q: {type: probe, run: make, mode: slow, retries: 0, wait: 5s, next: done}\n" +
		"  done: {type: succeed}\n"
	bp, err := blueprint.Parse("t.yaml", []byte(src), blueprint.WithTypes(blueprint.MapTypes{"probe": probeType}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := blueprint.Decode[probeConfig](bp.Nodes["p"])
	if err != nil {
		t.Fatal(err)
	}
	want := probeConfig{
		Run:    blueprint.Command{Field: "run", Argv: blueprint.Argv{"go", "test"}},
		Checks: []blueprint.Command{{Field: "checks[0]", Line: "make"}, {Field: "checks[1]", Argv: blueprint.Argv{"vet"}}},
		Mode:   "fast", Limit: ptr(5), Retries: 3, Ratio: 0.5, Wait: 2 * time.Minute, Paths: []string{"a"},
		Tools: map[string]string{"go": "1.26"}, Free: []any{1},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("decode p:\n got %+v\nwant %+v", p, want)
	}
	// Written values win over defaults; a zero value takes the default.
	q, err := blueprint.Decode[probeConfig](bp.Nodes["q"])
	if err != nil {
		t.Fatal(err)
	}
	if q.Run.Line != "make" || q.Mode != "slow" || q.Retries != 3 || q.Wait != 5*time.Second || q.Limit != nil {
		t.Fatalf("decode q: %+v", q)
	}
}

// TestDecodeRefusesWhatValidationWould hands Decode nodes assembled in Go,
// past the loader: each wrong value must be refused naming its key, never
// decoded to a zero value.
func TestDecodeRefusesWhatValidationWould(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"missing required", map[string]any{}, `needs key "run"`},
		{"wrong kind", map[string]any{"run": "x", "limit": "5"}, "limit: expected int, got string"},
		{"int for duration", map[string]any{"run": "x", "wait": 5}, "wait: expected duration, got int"},
		{"enum", map[string]any{"run": "x", "mode": "fsat"}, `mode: must be one of [fast slow], got "fsat" (did you mean "fast"?)`},
		{"empty argv", map[string]any{"run": blueprint.Argv{}}, "run: expected command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := blueprint.Decode[probeConfig](&blueprint.Node{ID: "p", Type: "probe", Config: tc.config})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestValidatorPositionsAtField: a Validator's diagnostic points at the
// field's value with a caret, as a Check hook's did.
func TestValidatorPositionsAtField(t *testing.T) {
	src := "version: 1\nname: t\nstart: p\nnodes:\n  p: {type: probe, run: make, limit: 0, next: done}\n  done: {type: succeed}\n"
	_, err := blueprint.Parse("t.yaml", []byte(src), blueprint.WithTypes(blueprint.MapTypes{"probe": probeType}))
	if err == nil || !strings.Contains(err.Error(), "t.yaml:5:38: nodes.p.limit: a zero limit checks nothing") {
		t.Fatalf("got %v", err)
	}
	// The same check runs on a node assembled in Go.
	n := &blueprint.Node{ID: "p", Type: "probe", Config: map[string]any{"run": "make", "limit": 0}}
	if err := blueprint.ConfigError(blueprint.CheckConfig(probeType, n)); err == nil || !strings.Contains(err.Error(), "limit: a zero limit") {
		t.Fatalf("CheckConfig: %v", err)
	}
}

func TestConfiguredRefusesMalformedTags(t *testing.T) {
	for name, f := range map[string]func(){
		"unknown option": func() {
			type c struct {
				A string `sg:"a,requird"`
			}
			blueprint.Configured[c](blueprint.NodeType{})
		},
		"bad default": func() {
			type c struct {
				A int `sg:"a,default=many"`
			}
			blueprint.Configured[c](blueprint.NodeType{})
		},
		"no kind": func() {
			type c struct {
				A []int `sg:"a"`
			}
			blueprint.Configured[c](blueprint.NodeType{})
		},
		"duplicate key": func() {
			type c struct {
				A string `sg:"a"`
				B string `sg:"a"`
			}
			blueprint.Configured[c](blueprint.NodeType{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func ptr[T any](v T) *T { return &v }
