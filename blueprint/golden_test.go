package blueprint_test

import (
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestInvalidCorpus loads every broken blueprint under testdata/invalid and
// compares the rendered diagnostics with the .golden file beside it.
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) < 30 {
		t.Fatalf("want at least 30 broken blueprints, found %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := blueprint.Load(f, blueprint.WithTypes(testTypes))
			var diags blueprint.Diagnostics
			if !errors.As(err, &diags) {
				t.Fatalf("want diagnostics, got %v", err)
			}
			for _, d := range diags {
				if d.Line < 1 || d.Col < 1 || d.File != f {
					t.Errorf("diagnostic without a position: %+v", d)
				}
			}
			got := diags.Pretty() + "\n"
			golden.Compare(t, strings.TrimSuffix(f, ".yaml")+".golden", got, *update)
		})
	}
}

// TestValidCorpus loads every blueprint under testdata/valid.
func TestValidCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no valid blueprints found")
	}
	for _, f := range files {
		if _, err := blueprint.Load(f, blueprint.WithTypes(testTypes)); err != nil {
			var diags blueprint.Diagnostics
			errors.As(err, &diags)
			t.Errorf("%s: %s", f, diags.Pretty())
		}
	}
}
