package blueprint

import (
	"strings"
	"testing"
)

// TestSchemaPropsRefusesDrift: a schema that leaves out a key the decoder
// accepts, or offers one the decoder refuses, stops schema generation
// instead of shipping an editor schema that disagrees with validate.
func TestSchemaPropsRefusesDrift(t *testing.T) {
	tests := []struct {
		name    string
		schemas obj
		want    string // panic message fragment; empty means no panic
	}{
		{"matches", obj{"max": obj{}, "backoff": obj{}}, ""},
		{"missing key", obj{"max": obj{}}, "describes 1 keys, the decoder accepts 2"},
		{"extra key", obj{"max": obj{}, "backoff": obj{}, "jitter": obj{}}, "describes 3 keys"},
		{"renamed key", obj{"max": obj{}, "back_off": obj{}}, `does not describe key "backoff"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if tc.want == "" && r != nil {
					t.Fatalf("panicked: %v", r)
				}
				if tc.want != "" && !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %q, want one containing %q", msg, tc.want)
				}
			}()
			schemaProps("retry", retryKeys, tc.schemas)
		})
	}
}
