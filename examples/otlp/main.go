// Command otlp exports a run's trace over OTLP/HTTP. With
// OTEL_EXPORTER_OTLP_ENDPOINT set it sends to that collector (Jaeger,
// Tempo, an OpenTelemetry Collector); without it, it starts a small OTLP
// receiver on loopback so the example runs offline and prints what arrived.
//
//	go run ./examples/otlp
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/otlp
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sandgate/sandgate/examples/internal/demorepo"
	"github.com/sandgate/sandgate/nodes"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/runtime/telemetry"
	"github.com/sandgate/sandgate/sandbox"
)

func main() {
	sandbox.Main()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otlp:", err)
		os.Exit(1)
	}
}

// receiver collects span names from OTLP/HTTP protobuf requests.
type receiver struct {
	mu    sync.Mutex
	names []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				r.names = append(r.names, fmt.Sprintf("%-22s %6.1f ms", sp.Name, float64(sp.EndTimeUnixNano-sp.StartTimeUnixNano)/1e6))
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func run() error {
	rec := &receiver{}
	if !telemetry.OTLPConfigured() {
		srv := httptest.NewServer(rec)
		defer srv.Close()
		os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
		fmt.Println("no OTEL_EXPORTER_OTLP_ENDPOINT: exporting to a receiver on", srv.URL)
	}
	repo, err := demorepo.Create()
	if err != nil {
		return err
	}
	defer os.RemoveAll(repo)
	reg := nodes.NewRegistry()
	_, file, _, _ := goruntime.Caller(0)
	bp, err := reg.Load(filepath.Join(filepath.Dir(file), "blueprint.yaml"))
	if err != nil {
		return err
	}
	rt := &runtime.Runtime{Registry: reg, RunsDir: filepath.Join(repo, ".runs"), Tracing: telemetry.Tracing(),
		Prepare: nodes.Environment(nodes.EnvOptions{Repo: repo, Caches: nodes.GoCaches()})}
	sum, err := rt.Run(context.Background(), bp, runtime.RunOptions{Workspace: repo})
	if err != nil {
		return err
	}
	fmt.Printf("status %s; trace also in %s\n", sum.Status, filepath.Join(sum.Dir, telemetry.TraceFile))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, n := range rec.names {
		fmt.Println("  span", n)
	}
	return nil
}
