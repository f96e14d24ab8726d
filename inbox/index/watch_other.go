//go:build !linux

package index

import "errors"

// watcher is inotify's on Linux; elsewhere the index stats every run.
type watcher struct{}

func newWatcher() (*watcher, error) { return nil, errors.New("no inotify") }

func (w *watcher) watchDir(int, string) error                  { return nil }
func (w *watcher) watchRun(string, string) error               { return nil }
func (w *watcher) unwatchRun(string)                           {}
func (w *watcher) changes() (dirty map[string]bool, lost bool) { return nil, true }
func (w *watcher) close()                                      {}
