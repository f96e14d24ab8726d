package runtime

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandgate/sandgate/secrets"
)

// The redacting tracer wraps a run's TracerProvider so every span name,
// attribute, event, status and recorded error passes the run's redactor
// before any exporter (trace.json, OTLP) sees it. Nodes reach the same
// wrapper through trace.SpanFromContext(ctx).TracerProvider(), so their
// spans are covered without knowing about it.

type redactProvider struct {
	trace.TracerProvider
	r *secrets.Redactor
}

func (p redactProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return redactTracer{Tracer: p.TracerProvider.Tracer(name, opts...), p: p}
}

type redactTracer struct {
	trace.Tracer
	p redactProvider
}

func (t redactTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	clean := []trace.SpanStartOption{trace.WithAttributes(t.p.attrs(cfg.Attributes())...),
		trace.WithLinks(cfg.Links()...), trace.WithSpanKind(cfg.SpanKind())}
	if !cfg.Timestamp().IsZero() {
		clean = append(clean, trace.WithTimestamp(cfg.Timestamp()))
	}
	if cfg.NewRoot() {
		clean = append(clean, trace.WithNewRoot())
	}
	ctx, sp := t.Tracer.Start(ctx, t.p.r.String(name), clean...)
	w := redactSpan{Span: sp, p: t.p}
	return trace.ContextWithSpan(ctx, w), w
}

type redactSpan struct {
	trace.Span
	p redactProvider
}

func (s redactSpan) AddEvent(name string, opts ...trace.EventOption) {
	s.Span.AddEvent(s.p.r.String(name), s.p.event(opts)...)
}

func (s redactSpan) RecordError(err error, opts ...trace.EventOption) {
	if err != nil {
		if msg := s.p.r.String(err.Error()); msg != err.Error() {
			err = errors.New(msg)
		}
	}
	s.Span.RecordError(err, s.p.event(opts)...)
}

func (s redactSpan) SetStatus(code codes.Code, desc string) {
	s.Span.SetStatus(code, s.p.r.String(desc))
}
func (s redactSpan) SetName(name string)                    { s.Span.SetName(s.p.r.String(name)) }
func (s redactSpan) SetAttributes(kv ...attribute.KeyValue) { s.Span.SetAttributes(s.p.attrs(kv)...) }
func (s redactSpan) TracerProvider() trace.TracerProvider   { return s.p }

func (p redactProvider) event(opts []trace.EventOption) []trace.EventOption {
	cfg := trace.NewEventConfig(opts...)
	return []trace.EventOption{trace.WithAttributes(p.attrs(cfg.Attributes())...),
		trace.WithTimestamp(cfg.Timestamp()), trace.WithStackTrace(cfg.StackTrace())}
}

// attrs redacts string and string-slice attribute values.
func (p redactProvider) attrs(kv []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(kv))
	for i, a := range kv {
		switch a.Value.Type() {
		case attribute.STRING:
			a.Value = attribute.StringValue(p.r.String(a.Value.AsString()))
		case attribute.STRINGSLICE:
			ss := append([]string(nil), a.Value.AsStringSlice()...)
			for j := range ss {
				ss[j] = p.r.String(ss[j])
			}
			a.Value = attribute.StringSliceValue(ss)
		}
		out[i] = a
	}
	return out
}
