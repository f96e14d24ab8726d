package main

import (
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandgate/sandgate/blueprints"
)

const dirBlueprint = `version: 1
name: team-chore
description: the team's own chore
inputs:
  ticket: {required: true, pattern: 'OPS-[0-9]+', description: the ticket}
start: work
nodes:
  work: {type: shell, run: "true", next: done}
  done: {type: succeed}
`

// TestServeStartsDirectoryBlueprints: with --blueprints-dir the inbox
// lists the directory's blueprints beside the shipped ones, generates
// their form from their inputs, and Start reads the same set (a name in
// the directory hides the shipped one; a path is never a name).
func TestServeStartsDirectoryBlueprints(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"team-chore.yaml": dirBlueprint, "fix-failing-test.yaml": strings.Replace(dirBlueprint, "the team's own chore", "our own fix-failing-test", 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	acts := &serveActions{blueprints: blueprintSet{dirs: []string{dir}, shipped: blueprints.FS}}
	cfg := serveConfig{runs: []string{t.TempDir()}, reviews: []string{t.TempDir()}, acts: acts, by: "ana"}
	srv, err := cfg.server()
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	list := get("/start")
	for _, want := range []string{`href="/start/team-chore"`, `href="/start/fix-ci"`, `href="/start/fix-failing-test"`} {
		if !strings.Contains(list, want) {
			t.Errorf("the start list lacks %s:\n%s", want, list)
		}
	}
	if form := get("/start/team-chore"); !strings.Contains(form, `name="in.ticket"`) || !strings.Contains(form, `pattern="OPS-[0-9]&#43;"`) || !strings.Contains(form, "required") {
		t.Errorf("the directory blueprint's form:\n%s", form)
	}
	if form := get("/start/fix-failing-test"); !strings.Contains(form, "our own fix-failing-test") {
		t.Errorf("the directory's blueprint does not hide the shipped one of its name")
	}
	src, err := fs.ReadFile(acts.startable(), "team-chore.yaml")
	if err != nil || string(src) != dirBlueprint {
		t.Fatalf("Start's set reads %q, %v", src, err)
	}
	if _, err := acts.Start(t.Context(), "../team-chore", nil, nil, t.TempDir(), "ana"); err == nil || !strings.Contains(err.Error(), "not a blueprint the inbox lists") {
		t.Errorf("a path as a name: %v", err)
	}
	if _, err := (&serveActions{}).Start(t.Context(), "team-chore", nil, nil, t.TempDir(), "ana"); err == nil {
		t.Error("without the directory the server started a blueprint it does not list")
	}
}
