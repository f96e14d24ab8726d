//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lstatBeneath is the lstat of rel (a slash path) below root reached
// through directories only, or nil when there is no such entry (a
// component is missing, not a directory, or a symlink).
func lstatBeneath(root, rel string) (*sysStat, error) {
	p := root
	for _, c := range strings.Split(rel, "/") {
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil, nil
			}
			return nil, err
		}
		p = filepath.Join(p, c)
	}
	var st sysStat
	if err := lstat(p, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, err
	}
	return &st, nil
}
