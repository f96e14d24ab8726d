package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandgate/sandgate/blueprint"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/telemetry"
)

type pass struct{}

func (pass) Run(context.Context, *runtime.Input) (*runtime.Result, error) {
	return &runtime.Result{Outcome: runtime.OutcomePass}, nil
}

// receiver is a real OTLP/HTTP trace endpoint on loopback.
type receiver struct {
	mu    sync.Mutex
	spans []string
	auth  string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.auth = req.Header.Get("Authorization")
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				r.spans = append(r.spans, sp.Name)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func TestTraceFileAndOTLP(t *testing.T) {
	rec := &receiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer test-token")

	reg := runtime.NewRegistry()
	_ = reg.Register(runtime.Type{Spec: blueprint.NodeType{Name: "gate"}, New: func(*blueprint.Node) (runtime.Node, error) { return pass{}, nil }})
	bp, err := blueprint.Parse("t.yaml", []byte("version: 1\nname: traced\nstart: lint\nnodes:\n  lint: {type: gate, next: test}\n  test: {type: gate, next: done}\n  done: {type: succeed}\n"), blueprint.WithTypes(reg))
	if err != nil {
		t.Fatal(err)
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: t.TempDir(), Tracing: telemetry.Tracing()}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: t.TempDir()})
	if err != nil || sum.Status != runtime.StatusSucceeded {
		t.Fatalf("%v %+v", err, sum)
	}
	want := []string{"run traced", "validate", "node lint", "node test"}
	file, _ := os.ReadFile(filepath.Join(sum.Dir, telemetry.TraceFile))
	for _, name := range want {
		if !strings.Contains(string(file), `"Name":"`+name+`"`) {
			t.Errorf("trace.json lacks span %q", name)
		}
	}
	if !strings.Contains(string(file), `"Key":"sandgate.edge.to","Value":{"Type":"STRING","Value":"test"}`) {
		t.Errorf("node span lacks the edge it took:\n%s", file)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := strings.Join(rec.spans, ",")
	for _, name := range want {
		if !strings.Contains(got, name) {
			t.Errorf("collector did not receive %q (got %s)", name, got)
		}
	}
	if rec.auth != "Bearer test-token" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not honoured: %q", rec.auth)
	}
}
