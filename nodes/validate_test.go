package nodes

// An internal test: it builds nodes with the same guarded factories
// Register hands the runtime, which the runtime does not export.

import (
	"errors"
	"flag"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestInvalidGolden loads every blueprint under testdata/invalid, each
// broken in a way only a node type's Check hook sees, and compares the
// rendered diagnostics with the .golden file beside it.
func TestInvalidGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 10 {
		t.Fatalf("want at least 10 broken blueprints, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := blueprint.Load(f, blueprint.WithTypes(Types()))
			var diags blueprint.Diagnostics
			if !errors.As(err, &diags) {
				t.Fatalf("want diagnostics, got %v", err)
			}
			for _, d := range diags {
				if d.Line < 1 || d.Col < 1 || d.File != f || d.Snippet == "" {
					t.Errorf("diagnostic without a position or snippet: %+v", d)
				}
			}
			got := diags.Pretty() + "\n"
			golden.Compare(t, strings.TrimSuffix(f, ".yaml")+".golden", got, *update)
		})
	}
}

// corpus lists every blueprint file in the repository: shipped ones,
// examples, and the test corpora of the blueprint and nodes packages.
func corpus(t *testing.T) []string {
	var files []string
	for _, g := range []string{"../blueprints/*.yaml", "../examples/*/*.yaml",
		"../blueprint/testdata/*/*.yaml", "testdata/*/*.yaml"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			// Model scripts for offline runs live beside blueprints.
			if !strings.Contains(filepath.Base(f), "script") {
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	return files
}

// hookless is the built-in type set with every Check hook removed: what
// validation saw before the factories' checks moved into the hooks.
func hookless() blueprint.MapTypes {
	m := Types()
	for name, nt := range m {
		nt.Check = nil
		m[name] = nt
	}
	return m
}

// buildAll builds every node of bp with the factories run uses, without
// running anything.
func buildAll(bp *blueprint.Blueprint) error {
	fs := map[string]func(*blueprint.Node) error{}
	for _, ty := range types(Options{}) {
		f := ty.New
		fs[ty.Spec.Name] = func(n *blueprint.Node) error { _, err := f(n); return err }
	}
	var errs []error
	for _, id := range bp.Order {
		n := bp.Nodes[id]
		if blueprint.IsTerminal(n.Type) {
			continue
		}
		f, ok := fs[n.Type]
		if !ok {
			errs = append(errs, errors.New(id+": type "+n.Type+" is not registered"))
			continue
		}
		if err := f(n); err != nil {
			errs = append(errs, errors.New(id+": "+err.Error()))
		}
	}
	return errors.Join(errs...)
}

// TestValidateAgreesWithBuild holds validate to run's word for every
// blueprint in the repository: validation passes exactly when every node
// can be built. A blueprint whose only problems are node-type checks loads
// without the hooks; the factories must refuse it exactly when validation
// with the hooks does.
func TestValidateAgreesWithBuild(t *testing.T) {
	files := corpus(t)
	hookOnly, accepted := 0, 0
	for _, f := range files {
		_, fullErr := blueprint.Load(f, blueprint.WithTypes(Types()))
		bp, err := blueprint.Load(f, blueprint.WithTypes(hookless()))
		if err != nil {
			if fullErr == nil {
				t.Errorf("%s: a Check hook made an invalid blueprint valid: %v", f, err)
			}
			continue // run refuses it at load, as validate does
		}
		buildErr := buildAll(bp)
		switch {
		case fullErr == nil && buildErr != nil:
			t.Errorf("%s: validate says ok, run refuses: %v", f, buildErr)
		case fullErr != nil && buildErr == nil:
			t.Errorf("%s: validate refuses what run accepts:\n%v", f, fullErr)
		case fullErr == nil:
			accepted++
		default:
			hookOnly++
		}
	}
	invalid, _ := filepath.Glob("testdata/invalid/*.yaml")
	if hookOnly < len(invalid) || accepted < 8 {
		t.Errorf("corpus too thin to mean anything: %d refused only by node checks (want >= %d), %d accepted of %d files",
			hookOnly, len(invalid), accepted, len(files))
	}
}

// TestFactoriesRefuseWrongTypes builds nodes assembled in Go, never
// validated, with values of the wrong Go type in every field: each factory
// must return an error naming the field, not panic.
func TestFactoriesRefuseWrongTypes(t *testing.T) {
	for _, ty := range types(Options{}) {
		for field := range ty.Spec.Fields {
			t.Run(ty.Spec.Name+"."+field, func(t *testing.T) {
				n := &blueprint.Node{ID: "n", Type: ty.Spec.Name, Config: map[string]any{field: struct{}{}}}
				if ty.Spec.Fields[field].Kind == blueprint.KindAny {
					// Any value has the declared kind; the type's Check hook,
					// which runs once the required keys are there, judges it.
					for name, f := range ty.Spec.Fields {
						if f.Required && f.Kind == blueprint.KindString {
							n.Config[name] = "x"
							if len(f.Enum) > 0 {
								n.Config[name] = f.Enum[0] // a valid one: the field under test must be what is refused
							}
						}
					}
				}
				_, err := ty.New(n)
				if err == nil || !strings.Contains(err.Error(), field) {
					t.Fatalf("want an error naming %s, got %v", field, err)
				}
			})
		}
		t.Run(ty.Spec.Name+".empty", func(t *testing.T) {
			_, err := ty.New(&blueprint.Node{ID: "n", Type: ty.Spec.Name})
			if err != nil {
				return
			}
			for name, f := range ty.Spec.Fields {
				if f.Required {
					t.Fatalf("built without required field %s", name)
				}
			}
		})
	}
}

// TestUncappedDiffCapRefused: a diff_cap built in Go, bypassing the
// loader, must still fail closed rather than pass any change.
func TestUncappedDiffCapRefused(t *testing.T) {
	for _, ty := range types(Options{}) {
		if ty.Spec.Name != "diff_cap" {
			continue
		}
		for _, cfg := range []map[string]any{nil, {"max_lines": 0}, {"exclude": []string{"go.sum"}}} {
			if _, err := ty.New(&blueprint.Node{ID: "cap", Type: "diff_cap", Config: cfg}); err == nil {
				t.Errorf("diff_cap with %v built: it would pass any change", cfg)
			}
		}
		return
	}
	t.Fatal("diff_cap is not registered")
}
