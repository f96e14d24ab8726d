package telemetry

import (
	"context"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
)

// Metric names. Durations are in seconds, cost in USD.
const (
	MetricRuns         = "sandgate.runs"
	MetricRunDuration  = "sandgate.run.duration"
	MetricNodeDuration = "sandgate.node.duration"
	MetricGateFailures = "sandgate.gate.failures"
	MetricRetries      = "sandgate.edge.retries"
	MetricHandoffs     = "sandgate.handoffs"
	MetricTokens       = "sandgate.tokens"
	MetricCost         = "sandgate.cost"
)

// Attribute keys of the metrics beyond runtime's span attributes.
const (
	AttrFailureKind = attribute.Key("sandgate.gate.failure")
	AttrHandoffKind = attribute.Key("sandgate.handoff.kind")
	AttrModel       = attribute.Key("gen_ai.request.model")
	AttrTokenType   = attribute.Key("gen_ai.token.type")
)

// MetricsConfigured reports whether the environment asks for OTLP metrics.
func MetricsConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// Metrics returns a runtime.Metrics hook exporting over OTLP/HTTP, as the
// standard OTEL_EXPORTER_OTLP_* variables say, or nil when they say
// nothing. Each run gets its own provider, shut down (and so exported)
// when the run ends: the CLI is a short-lived process.
func Metrics() runtime.Metrics {
	if !MetricsConfigured() {
		return nil
	}
	return func(bp *blueprint.Blueprint) (runtime.Observer, func(context.Context) error) {
		exp, err := otlpmetrichttp.New(context.Background())
		if err != nil {
			return nil, func(context.Context) error { return err }
		}
		mp := sdkmetric.NewMeterProvider(
			sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "sandgate"))),
			// Long runs still export now and then; the shutdown exports the rest.
			sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Minute))))
		return NewRecorder(mp.Meter("github.com/sandgate/sandgate/runtime"), bp), mp.Shutdown
	}
}

// Recorder turns one run's events into metrics on a meter.
type Recorder struct {
	bp    *blueprint.Blueprint
	mu    sync.Mutex
	start time.Time

	runs, gateFails, retries, handoffs, tokens metric.Int64Counter
	cost                                       metric.Float64Counter
	runDur, nodeDur                            metric.Float64Histogram
}

// NewRecorder makes the instruments on m for a run of bp. Instrument
// errors leave no-op instruments: metrics never stop a run.
func NewRecorder(m metric.Meter, bp *blueprint.Blueprint) *Recorder {
	r := &Recorder{bp: bp}
	r.runs, _ = m.Int64Counter(MetricRuns, metric.WithDescription("runs ended, by terminal state and blueprint"))
	r.runDur, _ = m.Float64Histogram(MetricRunDuration, metric.WithUnit("s"), metric.WithDescription("run duration, answers and resumes counted per process"))
	r.nodeDur, _ = m.Float64Histogram(MetricNodeDuration, metric.WithUnit("s"), metric.WithDescription("node attempt duration by node type"))
	r.gateFails, _ = m.Int64Counter(MetricGateFailures, metric.WithDescription("gate attempts that did not pass, by gate and kind (fail, error, timeout)"))
	r.retries, _ = m.Int64Counter(MetricRetries, metric.WithDescription("bounded (retry) edges taken, by edge"))
	r.handoffs, _ = m.Int64Counter(MetricHandoffs, metric.WithDescription("runs handed to a person, by reason kind"))
	r.tokens, _ = m.Int64Counter(MetricTokens, metric.WithUnit("{token}"), metric.WithDescription("model tokens by model and type (input, output, cached)"))
	r.cost, _ = m.Float64Counter(MetricCost, metric.WithUnit("USD"), metric.WithDescription("model cost by model"))
	return r
}

// Event implements runtime.Observer.
func (r *Recorder) Event(ev runtime.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := context.Background()
	if r.start.IsZero() {
		r.start = ev.Time // run_started, or the first event of a resume
	}
	bpAttr := runtime.AttrBlueprint.String(r.bp.Name)
	switch ev.Type {
	case runtime.EvNodeFinished:
		r.nodeFinished(ctx, ev)
	case runtime.EvEdgeTaken:
		if ev.Count > 0 {
			r.retries.Add(ctx, 1, metric.WithAttributes(bpAttr, runtime.AttrEdge.String(ev.Edge)))
		}
	case runtime.EvRunFinished:
		attrs := metric.WithAttributes(bpAttr, runtime.AttrStatus.String(string(ev.Status)))
		r.runs.Add(ctx, 1, attrs)
		r.runDur.Record(ctx, ev.Time.Sub(r.start).Seconds(), attrs)
		if ev.Status == runtime.StatusHandedOff {
			r.handoffs.Add(ctx, 1, metric.WithAttributes(bpAttr, AttrHandoffKind.String(ev.Kind)))
		}
	case runtime.EvAnswered:
		r.start = ev.Time // the answered run is timed from the answer
	}
}

func (r *Recorder) nodeFinished(ctx context.Context, ev runtime.Event) {
	typ := ""
	if n := r.bp.Nodes[ev.Node]; n != nil {
		typ = n.Type
	}
	outcome := string(ev.Outcome)
	if ev.Error != "" {
		outcome = "error"
	}
	r.nodeDur.Record(ctx, float64(ev.DurationMS)/1000, metric.WithAttributes(runtime.AttrNodeType.String(typ), runtime.AttrOutcome.String(outcome)))
	if r.isGate(typ) && ev.Outcome != runtime.OutcomePass {
		kind := outcome
		if ev.TimedOut {
			kind = "timeout" // the runtime's own verdict on a node past its timeout
		}
		r.gateFails.Add(ctx, 1, metric.WithAttributes(runtime.AttrNodeID.String(ev.Node), runtime.AttrNodeType.String(typ), AttrFailureKind.String(kind)))
	}
	if ev.Tokens == 0 && ev.Cost == 0 {
		return
	}
	model, _ := ev.Outputs["model"].(string)
	if model == "" {
		model = "unknown"
	}
	m := AttrModel.String(model)
	in, okIn := number(ev.Outputs["tokens_in"])
	out, okOut := number(ev.Outputs["tokens_out"])
	if okIn && okOut {
		r.tokens.Add(ctx, in, metric.WithAttributes(m, AttrTokenType.String("input")))
		r.tokens.Add(ctx, out, metric.WithAttributes(m, AttrTokenType.String("output")))
		if cached, ok := number(ev.Outputs["tokens_cached"]); ok && cached > 0 {
			r.tokens.Add(ctx, cached, metric.WithAttributes(m, AttrTokenType.String("cached")))
		}
	} else {
		r.tokens.Add(ctx, int64(ev.Tokens), metric.WithAttributes(m, AttrTokenType.String("total")))
	}
	r.cost.Add(ctx, ev.Cost, metric.WithAttributes(m))
}

func (r *Recorder) isGate(typ string) bool {
	if r.bp.Types == nil {
		return false
	}
	t, ok := r.bp.Types.NodeType(typ)
	return ok && t.Gate
}

// number reads an output that may be an int (live) or a float64 (decoded
// from JSON).
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}
