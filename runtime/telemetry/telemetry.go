// Package telemetry exports sandgate traces: every run's spans go to
// trace.json in its run directory, and, when the standard
// OTEL_EXPORTER_OTLP_* variables are set, to a collector over OTLP/HTTP.
//
// It lives apart from package runtime so that embedders who bring their own
// TracerProvider do not link the OTLP exporter and its protobuf stack.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandgate/sandgate/runtime"
)

// TraceFile is the name of the span file in each run directory.
const TraceFile = "trace.json"

// OTLPConfigured reports whether the environment asks for OTLP export.
func OTLPConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracing returns a runtime.Tracing hook that writes trace.json and, when
// configured by the environment, exports over OTLP/HTTP as well.
func Tracing() runtime.Tracing {
	return func(runDir string) (trace.TracerProvider, func(context.Context) error, error) {
		f, err := os.OpenFile(filepath.Join(runDir, TraceFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("open %s: %w", TraceFile, err)
		}
		fileExp, err := stdouttrace.New(stdouttrace.WithWriter(f))
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		opts := []sdktrace.TracerProviderOption{
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "sandgate"))),
			// Synchronous export: a crash must not lose the spans of
			// finished nodes, and a run produces few spans.
			sdktrace.WithSyncer(fileExp),
		}
		if OTLPConfigured() {
			otlp, err := otlptracehttp.New(context.Background())
			if err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("otlp exporter: %w", err)
			}
			opts = append(opts, sdktrace.WithBatcher(otlp))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		shutdown := func(ctx context.Context) error {
			return errors.Join(tp.Shutdown(ctx), f.Close())
		}
		return tp, shutdown, nil
	}
}
