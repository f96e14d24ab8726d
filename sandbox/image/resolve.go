package image

import (
	"context"
	"fmt"
	goruntime "runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Resolve asks the registry for the digest a tag names now, for this
// machine's platform: the digest of the linux/GOARCH image's manifest,
// not of a multi-platform index, since that is what Lease verifies a
// docker:// reference against. It is for proposing a pin; the pin, not
// the tag, is what a blueprint then uses.
func Resolve(ctx context.Context, ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	platform := v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithPlatform(platform),
		remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return d.String(), nil
}
