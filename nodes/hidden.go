package nodes

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandgate/sandgate/sandbox"
)

// placeHidden copies held-out tests from a host directory into the
// workspace for one test run and returns the function that removes them,
// so agent nodes never see them.
func (w *Workspace) placeHidden(ctx context.Context, dir string) (func(), error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, shellQuote(filepath.ToSlash(rel)))
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("hidden tests: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	res, err := w.Box.Exec(ctx, sandbox.Command{Args: []string{"tar", "-x", "-f", "-", "-C", sandbox.WorkDir}, Stdin: buf.Bytes(), Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("hidden tests: unpack failed: %s", res.Output)
	}
	return func() {
		_, _ = w.Exec(context.Background(), "rm -f -- "+strings.Join(files, " "), time.Minute)
	}, nil
}
