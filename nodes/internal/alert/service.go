package alert

import (
	"path/filepath"
	"strings"

	"github.com/sandgate/sandgate/runtime"
)

// Service is the Input.Services key of the run's *Dispatcher (nil when no
// sink is configured).
var Service = runtime.NewServiceKey[*Dispatcher]("sandgate.alerts")

// Raise sends e through the run's dispatcher, if it has one, naming in's
// node unless e names one.
func Raise(in *runtime.Input, e Event) {
	d, ok := Service.Get(in)
	if !ok || d == nil {
		return
	}
	if e.Node == "" {
		e.Node = in.NodeID
	}
	d.Raise(e)
}

// Foreign reports whether repo (owner/name, or a local path) is none of
// the run's own repositories. With none known (a repository without
// remotes) nothing is foreign: there is nothing to compare with.
func (d *Dispatcher) Foreign(repo string) bool {
	if d == nil || len(d.repos) == 0 || repo == "" {
		return false
	}
	return !d.repos[normRepo(repo)]
}

// Elsewhere raises kind when repo is not one of the run's repositories:
// what a push or a review sends there leaves the run's own repository.
func Elsewhere(in *runtime.Input, kind, repo, text string) {
	d, ok := Service.Get(in)
	if !ok || !d.Foreign(repo) {
		return
	}
	Raise(in, Event{Kind: kind, Key: normRepo(repo), Text: text, Fields: map[string]string{"repository": repo}})
}

// normRepo compares owner/name without case and paths cleaned.
func normRepo(r string) string {
	if filepath.IsAbs(r) {
		return filepath.Clean(strings.TrimSuffix(r, "/"))
	}
	return strings.ToLower(strings.TrimSuffix(r, ".git"))
}
