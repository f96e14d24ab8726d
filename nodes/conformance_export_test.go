package nodes

import "github.com/sandgate/sandgate/runtime"

// BuiltinTypes returns every registered built-in type with its guarded
// factory, for the conformance suite.
func BuiltinTypes() []runtime.Type { return types(Options{}) }
