package gocanary

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Tree is the repository as the harness sees it (the base plus the
// change, never read through the box). Paths are slash paths relative to
// the module root; "." is the root.
type Tree interface {
	// Dirs lists every directory that holds a regular file.
	Dirs() []string
	// Files lists the names of the regular files directly in dir.
	Files(dir string) []string
	// ReadFile returns a regular file's content; links are not followed.
	ReadFile(rel string) ([]byte, error)
}

// maxFileBytes caps a file the plan reads: test sources are copied into
// the overlay, so one huge file would make the phase-one script huge.
const maxFileBytes = 16 << 20

// errTooLarge is a file past maxFileBytes.
var errTooLarge = errors.New("larger than the canary reads")

// DirTree is a Tree over a directory on the host.
type DirTree string

// Dirs implements Tree.
func (d DirTree) Dirs() []string {
	var out []string
	root := string(d)
	_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if e.Name() == ".git" && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			if len(out) == 0 || out[len(out)-1] != rel {
				out = append(out, rel)
			}
		}
		return nil
	})
	return slices.Compact(sorted(out))
}

// Files implements Tree.
func (d DirTree) Files(dir string) []string {
	ents, _ := os.ReadDir(filepath.Join(string(d), filepath.FromSlash(dir)))
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// ReadFile implements Tree.
func (d DirTree) ReadFile(rel string) ([]byte, error) {
	p := filepath.Join(string(d), filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err == nil && len(b) > maxFileBytes {
		err = errTooLarge
	}
	return b, err
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// goFiles lists dir's .go files.
func goFiles(t Tree, dir string) []string {
	var out []string
	for _, f := range t.Files(dir) {
		if strings.HasSuffix(f, ".go") {
			out = append(out, f)
		}
	}
	return out
}

// testFiles lists dir's _test.go files.
func testFiles(t Tree, dir string) []string {
	var out []string
	for _, f := range t.Files(dir) {
		if strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

func join(dir, name string) string { return path.Join(dir, name) }
