package main

import (
	"errors"
	"io/fs"
	"os"
	"slices"
)

// blueprintSet is what the inbox can start runs of: the blueprints in the
// operator's --blueprints-dir directories (NAME.yaml, first directory
// first) and then the shipped ones; a name found in a directory hides the
// shipped blueprint of that name. The directories are read at each
// request, so a blueprint added to one appears without a restart.
type blueprintSet struct {
	dirs    []string
	shipped fs.FS
}

func (b blueprintSet) fsyss() []fs.FS {
	var out []fs.FS
	for _, d := range b.dirs {
		out = append(out, os.DirFS(d))
	}
	return append(out, b.shipped)
}

// Open opens name in the first place that has it.
func (b blueprintSet) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	for _, f := range b.fsyss() {
		file, err := f.Open(name)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return file, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Glob is every place's matches, each name once, sorted.
func (b blueprintSet) Glob(pattern string) ([]string, error) {
	var out []string
	for _, f := range b.fsyss() {
		m, err := fs.Glob(f, pattern)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
