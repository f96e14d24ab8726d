package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// leakyNode puts the credentials it finds everywhere a node can: outputs,
// feedback, reason, an attempt file, span attributes, span names, events
// and recorded errors.
type leakyNode struct{}

func (leakyNode) Run(ctx context.Context, in *runtime.Input) (*runtime.Result, error) {
	s := os.Getenv("RT_TEST_TOKEN") + " and " + os.Getenv("RT_PLAIN")
	sp := trace.SpanFromContext(ctx)
	sp.SetAttributes(attribute.String("leak", s), attribute.StringSlice("leaks", []string{s}))
	sp.RecordError(errors.New("failed with " + s))
	_, child := sp.TracerProvider().Tracer("leaky").Start(ctx, "child "+s, trace.WithAttributes(attribute.String("leak", s)))
	child.AddEvent("event "+s, trace.WithAttributes(attribute.String("leak", s)))
	child.SetStatus(2, s)
	child.End()
	if err := in.WriteFile("leak.log", []byte(s)); err != nil {
		return nil, err
	}
	return &runtime.Result{Outcome: runtime.OutcomeFail, Feedback: s, Reason: s, Outputs: map[string]any{"out": s}}, nil
}

func TestRunRedactsCredentials(t *testing.T) {
	canaries := []string{"canary-rt-3f9a1c", "canary-plain-77d0e2"}
	t.Setenv("RT_TEST_TOKEN", canaries[0])
	t.Setenv("RT_PLAIN", canaries[1])
	reg := runtime.NewRegistry()
	if err := reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "leaky", Outputs: map[string]blueprint.Kind{"out": blueprint.KindString}},
		New: func(*blueprint.Node) (runtime.Node, error) { return leakyNode{}, nil }}); err != nil {
		t.Fatal(err)
	}
	bp, err := reg.Parse("leak.yaml", []byte("version: 1\nname: leak\nstart: a\nnodes:\n  a: {type: leaky, on_pass: ok, on_fail: stuck}\n  ok: {type: succeed}\n  stuck: {type: handoff}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Secrets: []string{"RT_PLAIN"},
		Tracing: func(string) (trace.TracerProvider, func(context.Context) error, error) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			return tp, tp.Shutdown, nil
		}}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil || sum.Status != runtime.StatusHandedOff {
		t.Fatalf("%v %v", sum, err)
	}
	var all strings.Builder
	filepath.WalkDir(sum.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(&all, "== %s\n%s\n", p, b)
		}
		return nil
	})
	for _, s := range rec.Ended() {
		fmt.Fprintf(&all, "== span %s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
	}
	text := all.String()
	for _, c := range canaries {
		if strings.Contains(text, c) {
			t.Fatalf("%s leaked:\n%s", c, text)
		}
	}
	for _, want := range []string{"leak.log", "handoff.md", "span child [redacted RT_TEST_TOKEN] and [redacted RT_PLAIN]", "failed with [redacted RT_TEST_TOKEN]"} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q:\n%s", want, text)
		}
	}
}
