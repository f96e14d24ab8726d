package runtime

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/secrets"
)

// Attribute keys on sandgate spans.
const (
	AttrRunID     = attribute.Key("sandgate.run.id")
	AttrBlueprint = attribute.Key("sandgate.blueprint")
	AttrStatus    = attribute.Key("sandgate.run.status")
	AttrReason    = attribute.Key("sandgate.run.reason")
	AttrNodeID    = attribute.Key("sandgate.node.id")
	AttrNodeType  = attribute.Key("sandgate.node.type")
	AttrAttempt   = attribute.Key("sandgate.node.attempt")
	AttrOutcome   = attribute.Key("sandgate.node.outcome")
	AttrEdge      = attribute.Key("sandgate.edge")
	AttrEdgeTo    = attribute.Key("sandgate.edge.to")
	AttrTokens    = attribute.Key("sandgate.tokens")
	AttrStage     = attribute.Key("sandgate.stage")
)

// Tracing configures tracing for one run. The runtime calls it once the run
// directory exists, so exporters can write there (trace.json); shutdown
// flushes them when the run ends.
type Tracing func(runDir string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error)

// Metrics sets up metrics for one run of bp: obs sees every journaled
// event, as an Observer does, and flush exports what it recorded when the
// run ends, so a short-lived process loses nothing.
type Metrics func(bp *blueprint.Blueprint) (obs Observer, flush func(context.Context) error)

const tracerName = "github.com/sandgate/sandgate/runtime"

// tracer sets up the run's tracer from the Tracing hook, or a no-op one;
// what the run's spans record passes the redactor first.
func (rt *Runtime) tracer(dir string, r *secrets.Redactor) (trace.Tracer, func(context.Context) error, error) {
	if rt.Tracing == nil {
		return noop.NewTracerProvider().Tracer(tracerName), func(context.Context) error { return nil }, nil
	}
	tp, shutdown, err := rt.Tracing(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Names()) > 0 {
		tp = redactProvider{TracerProvider: tp, r: r}
	}
	return tp.Tracer(tracerName), shutdown, nil
}

// stage records a finished harness stage (validate, workspace) as a span.
func (x *execution) stage(name string, start time.Time, err error) {
	_, sp := x.tracer.Start(x.traceCtx, name, trace.WithTimestamp(start))
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	}
	sp.End()
}

// traceEvent keeps node spans in step with the journal.
func (x *execution) traceEvent(ev Event) {
	switch ev.Type {
	case EvNodeFinished:
		sp := x.spans[ev.Node]
		if sp == nil {
			return
		}
		sp.SetAttributes(AttrOutcome.String(string(ev.Outcome)), AttrTokens.Int(ev.Tokens))
		if ev.Error != "" {
			sp.SetStatus(codes.Error, ev.Error)
		}
	case EvEdgeTaken:
		if sp := x.spans[ev.Node]; sp != nil {
			sp.SetAttributes(AttrEdge.String(ev.Edge), AttrEdgeTo.String(ev.To))
		}
	case EvNodeCanceled:
		if sp := x.spans[ev.Node]; sp != nil {
			sp.SetStatus(codes.Error, "canceled")
			sp.End()
			delete(x.spans, ev.Node)
		}
	case EvRunFinished:
		x.runSpan.SetAttributes(AttrStatus.String(string(ev.Status)), AttrReason.String(ev.Reason))
		if ev.Status != StatusSucceeded {
			x.runSpan.SetStatus(codes.Error, ev.Reason)
		}
	}
}

// startNodeSpan opens the span of one attempt; the node's context carries
// it so the node's own spans (model and tool calls) nest under it.
func (x *execution) startNodeSpan(ctx context.Context, id, typ string, n int) context.Context {
	stage := "node"
	if t, ok := x.rt.Registry.NodeType(typ); ok && t.Stage != "" {
		stage = t.Stage
	}
	ctx, sp := x.tracer.Start(ctx, stage+" "+id, trace.WithAttributes(
		AttrNodeID.String(id), AttrNodeType.String(typ), AttrAttempt.Int(n), AttrStage.String(stage)))
	x.spans[id] = sp
	return ctx
}

// endNodeSpan closes a finished attempt's span once its edge is known.
func (x *execution) endNodeSpan(id string) {
	if sp := x.spans[id]; sp != nil {
		sp.End()
		delete(x.spans, id)
	}
}
