package image

import (
	"context"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestResolvePicksThisPlatform: a tag naming a multi-platform index
// resolves to this machine's image's manifest digest, the one Lease
// verifies a docker:// reference against, not the index's.
func TestResolvePicksThisPlatform(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var idx v1.ImageIndex = empty.Index
	var mine v1.Hash
	for _, arch := range []string{"s390x", goruntime.GOARCH} {
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		if arch == goruntime.GOARCH {
			mine = d
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	tag, _ := name.NewTag(host + "/multi:1")
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	got, err := Resolve(context.Background(), tag.String())
	if err != nil {
		t.Fatal(err)
	}
	if idxDigest, _ := idx.Digest(); got != mine.String() || got == idxDigest.String() {
		t.Fatalf("resolved %s, want this platform's %s (the index is %s)", got, mine, idxDigest)
	}
	if _, err := Resolve(context.Background(), host+"/absent:1"); err == nil {
		t.Fatal("an absent tag resolved")
	}
}
