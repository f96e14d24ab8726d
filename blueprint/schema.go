package blueprint

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// durationPattern matches Go durations such as 90s, 20m or 1h30m.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// sizePattern matches byte sizes such as 512MiB or 4GiB (see parseSize).
const sizePattern = `^[0-9]+(B|KiB|MiB|GiB|TiB)$`

type obj = map[string]any

// JSONSchema returns a JSON Schema (draft 2020-12) of the blueprint format
// with the node types of ts, for editors that complete and check YAML. It is
// generated from the same key tables the decoder uses, so the two cannot
// drift apart.
func JSONSchema(ts TypeSet) []byte {
	names := typeNames(ts)
	var perType []any
	for _, name := range names {
		nt, _ := lookupType(ts, name)
		perType = append(perType, nodeTypeSchema(nt))
	}
	edge := obj{"oneOf": []any{
		obj{"type": "string", "description": "the next node's id"},
		obj{"type": "object", "additionalProperties": false, "required": []string{"to"},
			"properties": schemaProps("edge", plainEdgeKeys, obj{
				"to":           obj{"type": "string"},
				"max":          obj{"type": "integer", "minimum": 1, "description": "how often the edge may be taken in one run"},
				"on_exhausted": obj{"type": "string", "description": "where to go once max is used up (default: hand off)"},
			})},
	}}
	condEdge := obj{"type": "object", "additionalProperties": false, "required": []string{"to"},
		"properties": schemaProps("edges item", edgeKeys, obj{
			"to":           obj{"type": "string"},
			"when":         obj{"type": "string", "description": "expr-lang condition; first match wins"},
			"max":          obj{"type": "integer", "minimum": 1},
			"on_exhausted": obj{"type": "string"},
		})}
	s := obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "https://sandgate.dev/blueprint.schema.json",
		"title":                "sandgate blueprint",
		"type":                 "object",
		"additionalProperties": false,
		"required":             topRequired,
		"properties": schemaProps("blueprint", topKeys, obj{
			"version":     obj{"const": Version},
			"name":        obj{"type": "string"},
			"description": obj{"type": "string"},
			"start":       obj{"type": "string", "description": "id of the first node"},
			"inputs": obj{"type": "object", "propertyNames": obj{"pattern": identRE.String()},
				"additionalProperties": obj{"type": []string{"object", "null"}, "additionalProperties": false,
					"properties": schemaProps("input", inputKeys, obj{
						"description": obj{"type": "string"},
						"required":    obj{"type": "boolean"},
						"type":        obj{"enum": []string{"string", "int", "bool"}},
						"default":     obj{},
						"pattern":     obj{"type": "string", "description": "regular expression the whole value must match (string inputs); required for inputs used in argv commands"},
					})}},
			"budget": obj{"type": "object", "additionalProperties": false, "properties": schemaProps("budget", budgetKeys, obj{
				"max_node_runs": obj{"type": "integer", "minimum": 1},
				"timeout":       obj{"type": "string", "pattern": durationPattern},
				"tokens":        obj{"type": "integer", "minimum": 1},
				"cost": obj{"type": "number", "exclusiveMinimum": 0,
					"description": "USD the run's model calls may cost, priced by the operator's table (--prices)"},
				"answers": obj{"type": "integer", "minimum": 0, "default": DefaultAnswers,
					"description": "how often a handed-off run may be answered (sandgate answer); 0: never"},
			})},
			"sandbox": obj{"type": "object", "additionalProperties": false, "properties": schemaProps("sandbox", sandboxKeys, obj{
				"network":     obj{"enum": []string{"none", "allowlist"}},
				"allow_hosts": obj{"type": "array", "items": obj{"type": "string", "pattern": hostRE.String()}},
				"env":         obj{"type": "array", "items": obj{"type": "string", "pattern": envRE.String()}},
				"isolation":   obj{"enum": []string{"full", "none"}},
				"disk":        obj{"type": "string", "pattern": sizePattern},
				"image": obj{"type": "string", "pattern": imageRE.String(),
					"description": "the OCI image whose tree is the box's root: oci:DIR[:TAG], docker-archive:FILE or docker://REF@sha256:… (pinned)"},
			})},
			"nodes": obj{"type": "object", "minProperties": 1, "propertyNames": obj{"pattern": identRE.String()},
				"additionalProperties": obj{"$ref": "#/$defs/node"}},
		}),
		"$defs": obj{
			"edge":      edge,
			"cond_edge": condEdge,
			"node": obj{"type": "object", "required": []string{"type"},
				"properties": obj{"type": obj{"enum": names}},
				"allOf":      perType},
		},
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	return append(b, '\n')
}

// commonNodeSchema describes the keys every node accepts.
func commonNodeSchema() obj {
	return schemaProps("node", commonNodeKeys, obj{
		"type":        obj{"type": "string"},
		"description": obj{"type": "string"},
		"timeout":     obj{"type": "string", "pattern": durationPattern},
		"retry": obj{"type": "object", "additionalProperties": false, "properties": schemaProps("retry", retryKeys, obj{
			"max": obj{"type": "integer", "minimum": 0}, "backoff": obj{"type": "string", "pattern": durationPattern}})},
		"needs":   obj{"type": "array", "items": obj{"type": "string"}},
		"next":    obj{"oneOf": []any{obj{"$ref": "#/$defs/edge"}, obj{"type": "array", "items": obj{"type": "string"}, "minItems": 1}}},
		"on_pass": obj{"$ref": "#/$defs/edge"},
		"on_fail": obj{"$ref": "#/$defs/edge"},
		"edges":   obj{"type": "array", "minItems": 1, "items": obj{"$ref": "#/$defs/cond_edge"}},
	})
}

// schemaProps returns the schemas of exactly the keys of one of the
// decoder's key tables. It panics when the table and the schemas disagree:
// a key the decoder accepts must be described, and the schema may not
// offer a key the decoder refuses; the first test that builds the schema
// catches the drift.
func schemaProps(what string, keys []string, schemas obj) obj {
	if len(schemas) != len(keys) {
		panic(fmt.Sprintf("blueprint: the %s schema describes %d keys, the decoder accepts %d (%v)", what, len(schemas), len(keys), keys))
	}
	for _, k := range keys {
		if _, ok := schemas[k]; !ok {
			panic(fmt.Sprintf("blueprint: the %s schema does not describe key %q, which the decoder accepts", what, k))
		}
	}
	return schemas
}

func nodeTypeSchema(nt NodeType) obj {
	props := commonNodeSchema()
	if nt.Terminal {
		for _, k := range append(edgeNodeKeys, "needs") {
			delete(props, k)
		}
	}
	var required []string
	for _, name := range sortedKeys(nt.Fields) {
		f := nt.Fields[name]
		fs := kindSchema(f.Kind)
		if f.Doc != "" {
			fs["description"] = f.Doc
		}
		if len(f.Enum) > 0 {
			fs = obj{"enum": f.Enum, "description": f.Doc}
		}
		if f.Default != "" {
			fs["default"] = defaultValue(f)
		}
		props[name] = fs
		if f.Required {
			required = append(required, name)
		}
	}
	then := obj{"properties": props, "additionalProperties": false}
	if len(required) > 0 {
		then["required"] = required
	}
	if nt.Doc != "" {
		then["description"] = nt.Doc
	}
	return obj{"if": obj{"properties": obj{"type": obj{"const": nt.Name}}}, "then": then}
}

// defaultValue is a field's default as the JSON value of its kind.
func defaultValue(f Field) any {
	var v any
	var err error
	switch f.Kind {
	case KindInt:
		v, err = strconv.Atoi(f.Default)
	case KindFloat:
		v, err = strconv.ParseFloat(f.Default, 64)
	case KindBool:
		v, err = strconv.ParseBool(f.Default)
	default:
		return f.Default
	}
	if err != nil {
		return f.Default
	}
	return v
}

func kindSchema(k Kind) obj {
	switch k {
	case KindString:
		return obj{"type": "string"}
	case KindInt:
		return obj{"type": "integer"}
	case KindFloat:
		return obj{"type": "number"}
	case KindBool:
		return obj{"type": "boolean"}
	case KindDuration:
		return obj{"type": "string", "pattern": durationPattern}
	case KindStringList:
		return obj{"oneOf": []any{obj{"type": "string"}, obj{"type": "array", "items": obj{"type": "string"}}}}
	case KindStringMap:
		return obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	case KindCommand:
		return commandSchema()
	case KindCommandList:
		return obj{"oneOf": []any{commandSchema(), obj{"type": "array", "items": commandSchema()}}}
	}
	return obj{}
}

// commandSchema is a shell command line (no templates) or the argv form,
// whose items are one argument each and may name patterned inputs.
func commandSchema() obj {
	return obj{"oneOf": []any{
		obj{"type": "string", "description": "shell command line, run by sh -c; no ${{ }} templates"},
		obj{"type": "object", "additionalProperties": false, "required": []string{"argv"},
			"description": "argv form, no shell: each item is exactly one argument; templates may name string inputs that declare a pattern",
			"properties":  obj{"argv": obj{"type": "array", "minItems": 1, "items": obj{"type": "string"}}}},
	}}
}
