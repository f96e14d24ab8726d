package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// open finds the image a reference names. It does not verify anything
// yet (see verify).
func open(ctx context.Context, r Ref) (v1.Image, error) {
	switch r.Transport {
	case TransportDocker:
		ref, err := name.NewDigest(r.Name)
		if err != nil {
			return nil, err
		}
		platform := v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}
		// The harness's own registry logins (~/.docker/config.json, as
		// docker and crane read them): the box never sees them.
		return remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(platform),
			remote.WithAuthFromKeychain(authn.DefaultKeychain))
	case TransportDockerArchive:
		return tarball.ImageFromPath(r.Path, nil)
	case TransportOCI:
		return openLayout(r)
	}
	return nil, fmt.Errorf("unknown transport %q", r.Transport)
}

// openLayout picks the image of an OCI layout the reference names: by
// digest, by tag (its org.opencontainers.image.ref.name), or the only
// image the layout's index lists.
func openLayout(r Ref) (v1.Image, error) {
	if err := regularFile(filepath.Join(r.Path, "index.json")); err != nil {
		return nil, err
	}
	idx, err := layout.ImageIndexFromPath(r.Path)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		switch {
		case r.Digest != "":
			if d.Digest.String() == r.Digest {
				found = append(found, d)
			}
		case r.Tag != "":
			if d.Annotations["org.opencontainers.image.ref.name"] == r.Tag {
				found = append(found, d)
			}
		default:
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the layout's index.json lists %d images matching %s; name one by :TAG or @sha256:…", len(found), r)
	}
	if !found[0].MediaType.IsImage() {
		return nil, fmt.Errorf("%s is a %s, not an image manifest", found[0].Digest, found[0].MediaType)
	}
	if err := regularBlob(r.Path, found[0].Digest); err != nil {
		return nil, err
	}
	img, err := idx.Image(found[0].Digest)
	if err != nil {
		return nil, err
	}
	if err := regularBlobs(r.Path, img); err != nil {
		return nil, err
	}
	if r.Digest == "" {
		r.Digest = found[0].Digest.String()
	}
	return pinned{img, r.Digest}, nil
}

// pinned is an image whose manifest must hash to digest: a layout's
// index names its manifests by digest, so a manifest blob swapped on
// disk is refused like a registry's.
type pinned struct {
	v1.Image
	digest string
}

// regularBlobs refuses a layout whose blobs the image uses are not
// regular files. The layout is untrusted: a blob linked to a FIFO would
// block the run for ever, one linked to /dev/zero or a host file would
// be read as the image.
func regularBlobs(dir string, img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	if err := regularBlob(dir, m.Config.Digest); err != nil {
		return err
	}
	for _, l := range m.Layers {
		if err := regularBlob(dir, l.Digest); err != nil {
			return err
		}
	}
	return nil
}

func regularBlob(dir string, h v1.Hash) error {
	return regularFile(filepath.Join(dir, "blobs", h.Algorithm, h.Hex))
}

func regularFile(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v): refused", p, st.Mode().Type())
	}
	return nil
}
