// Package image makes a box's root from an OCI image (the blueprint's
// sandbox.image): it reads the image from an OCI layout directory
// (oci:DIR[:TAG]), a `docker save` archive (docker-archive:FILE) or a
// registry (docker://REF@sha256:…, pulled with go-containerregistry),
// verifies it, and unpacks it once into the sandbox's image cache
// (sandbox.LeaseImage), which the box then shows read-only as its root
// (sandbox.Policy.RootFS).
//
// It is a package of its own so that the sandbox, which imports nothing
// of ours, needs no OCI library either: the sandbox takes a prepared tree.
//
// Verification is a chain from the pinned digest down: the manifest's
// bytes must hash to the digest the reference pins (a registry reference
// must pin one); the configuration's bytes to the manifest's config
// digest; every layer's bytes to the manifest's layer digest, and its
// uncompressed tar to the configuration's diff_id. A layer is checked as
// it streams into a temporary tree, and the tree is used only when every
// check has passed.
//
// The image is untrusted input, and unpacking it runs as the harness
// (usually root): every path is resolved through an os.Root on the tree,
// which refuses to leave it, so a link `a -> /etc` and then a file
// `a/passwd` fail instead of writing the host's /etc. See unpack.go for
// what happens to each kind of entry.
package image
