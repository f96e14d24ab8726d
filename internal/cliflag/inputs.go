package cliflag

import (
	"fmt"
	"strings"
)

// Inputs collects repeated --input NAME=VALUE flags: a blueprint's
// inputs, each value a string (the first = splits; the value may hold
// more).
type Inputs map[string]any

func (f Inputs) String() string { return fmt.Sprint(map[string]any(f)) }

// Set adds one NAME=VALUE; a later one for the same name replaces it.
func (f Inputs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	f[k] = v
	return nil
}
