package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// offline reports whether a model name is an offline one (script:FILE or
// replay:FILE).
func offline(model string) bool {
	return strings.HasPrefix(model, "script:") || strings.HasPrefix(model, "replay:")
}

// models keeps one in-process model per script or recording for the life
// of the Options, so a retry loop continues the script instead of starting
// it over.
type models struct {
	mu      sync.Mutex
	offline map[string]Model
	// recordMu serialises appends to the recording.
	recordMu sync.Mutex
}

// load returns the offline model for script:FILE or replay:FILE, the path
// resolved against the blueprint's directory first.
func (m *models) load(model, blueprintFile string) (Model, error) {
	kind, path, _ := strings.Cut(model, ":")
	path = resolvePath(path, blueprintFile)
	key := kind + ":" + path
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.offline[key]; ok {
		return s, nil
	}
	var s Model
	switch kind {
	case "script":
		script, err := loadScript(path)
		if err != nil {
			return nil, err
		}
		s = &scriptModel{path: path, script: script}
	case "replay":
		rec, tape, err := loadRecording(path)
		if err != nil {
			return nil, err
		}
		s = &replayModel{rec: rec, mcp: tape}
	default:
		return nil, fmt.Errorf("model %s is not an offline model", model)
	}
	if m.offline == nil {
		m.offline = map[string]Model{}
	}
	m.offline[key] = s
	return s, nil
}

// resolvePath finds a script file relative to the blueprint, then the
// working directory.
func resolvePath(p, blueprintFile string) string {
	if filepath.IsAbs(p) || blueprintFile == "" {
		return p
	}
	if c := filepath.Join(filepath.Dir(blueprintFile), p); fileExists(c) {
		return c
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
