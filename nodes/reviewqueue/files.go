package reviewqueue

import (
	"os"
	"path/filepath"

	"github.com/sandgate/sandgate/nodes/internal/atomicfile"
	"github.com/sandgate/sandgate/runtime"
)

// writeEntry writes a queue entry's files, entry.json last so a listed
// entry is whole, and returns the entry's absolute directory.
func writeEntry(dir string, files map[string][]byte, redact func([]byte) []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"diff.patch", "verify.json", "summary.md", "entry.json"} {
		if err := atomicfile.Write(filepath.Join(dir, name), redact(files[name])); err != nil {
			return "", err
		}
	}
	return filepath.Abs(dir)
}

// AgentSummary is the latest summary an agent node published
// (outputs.<agent>.summary) in the run's journal, "" when none did.
func AgentSummary(runDir string) string {
	evs, err := runtime.ReadJournal(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		return ""
	}
	var out string
	for _, ev := range evs {
		if s, ok := ev.Outputs["summary"].(string); ok && ev.Type == runtime.EvNodeFinished && s != "" {
			out = s
		}
	}
	return out
}
