package testgate

import (
	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/nodes/internal/gate"
	"github.com/sandgate/sandgate/runtime"
)

// Type declares the test gate.
func Type() runtime.Type {
	return runtime.Type{Spec: blueprint.Configured[TestConfig](blueprint.NodeType{Name: "test", Stage: "verify", Gate: true, Doc: "runs tests and counts them from structured output",
		Outputs: map[string]blueprint.Kind{"passed": blueprint.KindInt, "failed": blueprint.KindInt, "skipped": blueprint.KindInt,
			"failures": blueprint.KindStringList, "flaky": blueprint.KindStringList}}), New: gate.Quietly(newTest, true)}
}
