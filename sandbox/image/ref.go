package image

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Transports, as skopeo and podman spell them.
const (
	TransportOCI           = "oci"
	TransportDockerArchive = "docker-archive"
	TransportDocker        = "docker"
)

// Ref is a parsed sandbox.image.
type Ref struct {
	Transport string
	// Path is the layout directory or archive (oci, docker-archive).
	Path string
	// Tag picks an image of an OCI layout by its ref.name annotation.
	Tag string
	// Name is the registry reference, digest included (docker).
	Name string
	// Digest is the manifest digest the reference pins ("sha256:…");
	// required for docker, optional for oci (DIR@sha256:…).
	Digest string
}

var (
	digestRE = regexp.MustCompile(`@(sha256:[0-9a-f]{64})$`)
	tagRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// Parse reads a sandbox.image value. Relative paths are taken from the
// harness's working directory.
func Parse(s string) (Ref, error) {
	transport, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return Ref{}, fmt.Errorf("%q names no transport: write oci:DIR[:TAG], docker-archive:FILE or docker://REF@sha256:…", s)
	}
	switch transport {
	case TransportDocker:
		name, ok := strings.CutPrefix(rest, "//")
		if !ok || name == "" {
			return Ref{}, fmt.Errorf("%q: a registry image is docker://REF@sha256:…", s)
		}
		m := digestRE.FindStringSubmatch(name)
		if m == nil {
			return Ref{}, fmt.Errorf("%q is not pinned: a registry image must name its digest (docker://REF@sha256:<64 hex digits>); a tag can move", s)
		}
		return Ref{Transport: transport, Name: name, Digest: m[1]}, nil
	case TransportOCI:
		r := Ref{Transport: transport, Path: rest}
		if m := digestRE.FindStringSubmatch(rest); m != nil {
			r.Digest, r.Path = m[1], strings.TrimSuffix(rest, m[0])
		} else if i := strings.LastIndex(rest, ":"); i >= 0 && tagRE.MatchString(rest[i+1:]) {
			r.Path, r.Tag = rest[:i], rest[i+1:]
		}
		return r.abs()
	case TransportDockerArchive:
		return Ref{Transport: transport, Path: rest}.abs()
	}
	return Ref{}, fmt.Errorf("%q: unknown transport %q (oci, docker-archive or docker)", s, transport)
}

func (r Ref) abs() (Ref, error) {
	if r.Path == "" {
		return Ref{}, fmt.Errorf("%s: no path", r.Transport)
	}
	p, err := filepath.Abs(r.Path)
	r.Path = p
	return r, err
}

func (r Ref) String() string {
	switch r.Transport {
	case TransportDocker:
		return "docker://" + r.Name
	case TransportOCI:
		switch {
		case r.Digest != "":
			return "oci:" + r.Path + "@" + r.Digest
		case r.Tag != "":
			return "oci:" + r.Path + ":" + r.Tag
		}
	}
	return r.Transport + ":" + r.Path
}
