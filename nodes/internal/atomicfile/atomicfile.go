package atomicfile

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Write writes data beside path and renames it into place.
func Write(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteJSON replaces path with v's JSON (as JSON renders it) through a
// new temporary file in the same directory, synced before the rename, so
// a reader sees the old entry or the new one, never half of one.
func WriteJSON(path string, v any) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".entry-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(JSON(v))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// JSON is v as indented JSON ending in a newline, as WriteJSON writes
// it. v must marshal (the harness's own record types do).
func JSON(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return append(b, '\n')
}
