//go:build unix

// The test drives a real agent node (package nodes), which needs a Unix
// host; the metrics code itself builds everywhere.

package telemetry_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/cost"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/telemetry"
	"github.com/sandgate/sandgate/sandbox"
)

// point is one exported data point: a sum's value or a histogram's count.
type point struct {
	name  string
	attrs string // sorted k=v pairs
	value float64
}

// metricsReceiver is a real OTLP/HTTP metrics endpoint on loopback.
type metricsReceiver struct {
	mu     sync.Mutex
	points []point
}

func (r *metricsReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, _ := io.ReadAll(body)
	var msg colmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				r.add(m.Name, m.GetSum().GetDataPoints(), m.GetHistogram().GetDataPoints())
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *metricsReceiver) add(name string, sums []*metricpb.NumberDataPoint, hists []*metricpb.HistogramDataPoint) {
	for _, dp := range sums {
		v := dp.GetAsDouble()
		if _, ok := dp.Value.(*metricpb.NumberDataPoint_AsInt); ok {
			v = float64(dp.GetAsInt())
		}
		r.points = append(r.points, point{name, attrString(dp.Attributes), v})
	}
	for _, dp := range hists {
		r.points = append(r.points, point{name, attrString(dp.Attributes), float64(dp.Count)})
	}
}

func attrString(kvs []*commonpb.KeyValue) string {
	var parts []string
	for _, kv := range kvs {
		parts = append(parts, kv.Key+"="+kv.Value.GetStringValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// sum adds the values of name's points whose attributes include all of want.
func (r *metricsReceiver) sum(name string, want ...string) (float64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	total, n := 0.0, 0
next:
	for _, p := range r.points {
		if p.name != name {
			continue
		}
		for _, w := range want {
			if !strings.Contains(","+p.attrs+",", ","+w+",") {
				continue next
			}
		}
		total, n = total+p.value, n+1
	}
	return total, n
}

// fakeBox answers the agent's one sandbox command (reading rule files).
type fakeBox struct{}

func (fakeBox) Exec(context.Context, sandbox.Command) (*sandbox.Result, error) {
	return &sandbox.Result{}, nil
}

// hang is a gate that never decides: the runtime stops it at its timeout.
type hang struct{}

func (hang) Run(ctx context.Context, _ *runtime.Input) (*runtime.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type verdicts []runtime.Outcome

func (v verdicts) Run(_ context.Context, in *runtime.Input) (*runtime.Result, error) {
	return &runtime.Result{Outcome: v[min(in.Attempt, len(v))-1], Feedback: "gate says no"}, nil
}

const scriptTurns = `- {tool_calls: [{function: {name: finish, arguments: {summary: done}}}], usage: {prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400}}
- {tool_calls: [{function: {name: finish, arguments: {summary: done}}}], usage: {prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400}}
`

// TestMetricsOTLP runs three real runs, one that succeeds after a gate
// failure and a retry, one handed off when its retry edge runs out, one
// whose gate the runtime stops at its timeout, and reads the metrics back
// from a real OTLP/HTTP receiver.
func TestMetricsOTLP(t *testing.T) {
	rec := &metricsReceiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", srv.URL+"/v1/metrics")

	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte(scriptTurns), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := runtime.NewRegistry()
	for _, s := range nodes.Specs() {
		if s.Name == "agent" {
			_ = reg.Register(runtime.Type{Spec: s, New: agent.Factory(agent.Options{Prices: cost.Table{"script": {Input: 1, Output: 2, CachedInput: 0.5}}})})
		}
	}
	gate := func(v verdicts) runtime.Factory { return func(*blueprint.Node) (runtime.Node, error) { return v, nil } }
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "check", Gate: true}, New: gate(verdicts{runtime.OutcomeFail, runtime.OutcomePass})})
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "never"}, New: gate(verdicts{runtime.OutcomeFail})})
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "hang", Gate: true}, New: func(*blueprint.Node) (runtime.Node, error) { return hang{}, nil }})
	var services runtime.Services
	agent.ServiceExecutor.Set(&services, fakeBox{})
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Metrics: telemetry.Metrics(), Services: services}
	if rt.Metrics == nil {
		t.Fatal("metrics not configured by OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	}
	run := func(src string, want runtime.Status) {
		t.Helper()
		bp, err := reg.Parse("m.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: dir})
		if err != nil || sum.Status != want {
			t.Fatalf("%v: %s (%s), want %s", err, sum.Status, sum.Reason, want)
		}
	}
	run(fmt.Sprintf("version: 1\nname: metered\nstart: implement\nnodes:\n  implement: {type: agent, prompt: fix, model: \"script:%s\", next: gate}\n  gate: {type: check, on_pass: done, on_fail: {to: implement, max: 2}}\n  done: {type: succeed}\n", script), runtime.StatusSucceeded)
	run("version: 1\nname: stuck\nstart: a\nnodes:\n  a: {type: never, on_pass: done, on_fail: {to: a, max: 1}}\n  done: {type: succeed}\n", runtime.StatusHandedOff)
	run("version: 1\nname: slow\nstart: h\nnodes:\n  h: {type: hang, timeout: 50ms, on_pass: done, on_fail: no}\n  done: {type: succeed}\n  no: {type: fail}\n", runtime.StatusFailed)

	checks := []struct {
		name  string
		attrs []string
		want  float64
	}{
		{telemetry.MetricRuns, []string{"sandgate.blueprint=metered", "sandgate.run.status=succeeded"}, 1},
		{telemetry.MetricRuns, []string{"sandgate.blueprint=stuck", "sandgate.run.status=handed_off"}, 1},
		{telemetry.MetricRunDuration, []string{"sandgate.blueprint=metered"}, 1},
		{telemetry.MetricNodeDuration, []string{"sandgate.node.type=agent", "sandgate.node.outcome=pass"}, 2},
		{telemetry.MetricNodeDuration, []string{"sandgate.node.type=check", "sandgate.node.outcome=fail"}, 1},
		{telemetry.MetricGateFailures, []string{"sandgate.node.id=gate", "sandgate.gate.failure=fail"}, 1},
		{telemetry.MetricGateFailures, []string{"sandgate.node.id=h", "sandgate.gate.failure=timeout"}, 1},
		{telemetry.MetricRetries, []string{"sandgate.blueprint=metered"}, 1},
		{telemetry.MetricHandoffs, []string{"sandgate.blueprint=stuck", "sandgate.handoff.kind=edge"}, 1},
		{telemetry.MetricTokens, []string{"gen_ai.request.model=script", "gen_ai.token.type=input"}, 2000},
		{telemetry.MetricTokens, []string{"gen_ai.request.model=script", "gen_ai.token.type=output"}, 200},
		{telemetry.MetricTokens, []string{"gen_ai.request.model=script", "gen_ai.token.type=cached"}, 800},
		{telemetry.MetricCost, []string{"gen_ai.request.model=script"}, 0.002},
	}
	for _, c := range checks {
		got, n := rec.sum(c.name, c.attrs...)
		if n == 0 || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v (%d points), want %v", c.name, c.attrs, got, n, c.want)
		}
	}
	if _, n := rec.sum(telemetry.MetricGateFailures, "sandgate.node.id=a"); n != 0 {
		t.Errorf("a node type not declared a gate counted as a gate failure")
	}
	if t.Failed() {
		rec.mu.Lock()
		for _, p := range rec.points {
			t.Logf("%s{%s} %v", p.name, p.attrs, p.value)
		}
		rec.mu.Unlock()
	}
}
