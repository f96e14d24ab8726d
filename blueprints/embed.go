// Package blueprints ships sandgate's ready-to-use blueprints, the JSON
// Schema of the format and the scripted models of the offline demo, both as
// files in this directory and embedded for the CLI.
package blueprints

import "embed"

// FS holds every blueprint, the schema and the demo scripts.
//
//go:embed *.yaml blueprint.schema.json demo/*.yaml
var FS embed.FS
