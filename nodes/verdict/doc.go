// Package verdict is the format of a run's verify.json: the latest
// judgement of every gate node, each tied to the fingerprint of the exact
// change it judged, with one summary key per kind of gate. Promotion
// reads nothing but these records; the review queue, the CLI and the web
// inbox show them.
//
// It is pure (bytes in, bytes out, nothing run) and imports nothing of
// sandgate's: any package, the inbox included, may import it, and it
// must never import the runtime, the workspace or a node package.
package verdict
