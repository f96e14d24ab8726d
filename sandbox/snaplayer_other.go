//go:build !linux

package sandbox

import (
	"context"
	"errors"
)

// layersSupported: overlays are Linux's; snapshots are built flat.
func layersSupported() bool { return false }

func (b *build) runLayer(ctx context.Context, baseCommit string, lowers []string) error {
	return errors.New("snapshot layers need Linux overlays")
}

func ensureView(view string, layers []string) error {
	return errors.New("snapshot layers need Linux overlays")
}

func removeView(view string) error { return nil }
