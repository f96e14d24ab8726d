package runtime_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/runtime"
)

// TestRunSettings: what a run was started with comes back from its
// directory for an answer or a resume, with credentials redacted; a run
// started without settings has none.
func TestRunSettings(t *testing.T) {
	t.Setenv("SETTINGS_TEST_TOKEN", "canary-settings-91ab")
	type settings struct {
		Model    string   `json:"model"`
		AllowEnv []string `json:"allow_env"`
		BaseURL  string   `json:"base_url"`
	}
	in := settings{Model: "script:/abs/model.yaml", AllowEnv: []string{"GOPRIVATE_TOKEN"}, BaseURL: "https://x.example/v1?key=canary-settings-91ab"}
	for _, c := range []struct {
		name string
		opts any
		want bool
	}{{"with", in, true}, {"without", nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, retryLoop("[pass]", ""))
			sum, err := f.rt.Run(t.Context(), f.bp, runtime.RunOptions{Workspace: f.ws, Inputs: map[string]any{"task": "x"}, Settings: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			var got settings
			ok, err := runtime.ReadSettings(sum.Dir, &got)
			if err != nil || ok != c.want {
				t.Fatalf("ReadSettings = %v %v, want %v", ok, err, c.want)
			}
			if !c.want {
				return
			}
			if got.Model != in.Model || strings.Join(got.AllowEnv, ",") != "GOPRIVATE_TOKEN" {
				t.Fatalf("settings came back as %+v", got)
			}
			if b, _ := os.ReadFile(filepath.Join(sum.Dir, "meta.json")); strings.Contains(string(b), "canary-settings-91ab") || !strings.Contains(got.BaseURL, "redacted") {
				t.Fatalf("a credential in the settings was written as it is:\n%s", b)
			}
		})
	}
}
