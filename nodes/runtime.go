package nodes

import (
	"log/slog"
	"net/netip"
	"slices"

	"github.com/sandgate/sandgate/nodes/agent"
	"github.com/sandgate/sandgate/runtime"
	"github.com/sandgate/sandgate/sandbox"
)

// Config is everything a runtime with the built-in node types and a
// sandboxed workspace needs, in one place: what Options and EnvOptions
// hold, plus the runtime's own settings. The CLI's run, answer, resume,
// demo and eval and the Temporal worker all build their runtimes from it
// (NewRuntime), so an operator's allowance means the same everywhere.
type Config struct {
	// RunsDir holds one directory per run (runtime.Runtime.RunsDir).
	RunsDir string
	// Repo is the user's repository, only ever read; Rev the commit runs
	// work on (default HEAD; a resume or answer uses the run's own base).
	Repo, Rev string

	// Agent configures agent nodes: model override, recording, the
	// operator's endpoint and key, prices.
	Agent agent.Options
	// AllowEnv lists the credentials blueprints may pass into the box
	// through sandbox.env (the CLI's --allow-env). One list serves both
	// places that check it: loading the blueprint and starting its box.
	AllowEnv []string
	// AllowEndpoints lists URL prefixes blueprints may send credentials
	// to (the CLI's --allow-endpoint); see Options.AllowEndpoints.
	AllowEndpoints []string
	// ReviewDir is where review nodes without a dir key queue local
	// reviews.
	ReviewDir string

	// AllowUnconfined lets blueprints with sandbox.isolation: none run.
	AllowUnconfined bool
	// CacheDir holds the shared per-commit snapshots (default
	// sandbox.DefaultCacheDir).
	CacheDir string
	// Caches are host caches shown copy-on-write in the box. Nil means
	// GoCaches (builds start warm); an empty, non-nil slice means none.
	Caches []sandbox.Cache
	// ColdBuilds turns warm builds off (EnvOptions.ColdBuilds): no warm
	// box compiles the base commit into the harness's build cache.
	ColdBuilds bool
	// OnAlert receives the egress proxy's alerts.
	OnAlert func(sandbox.Alert)
	// AlertSinks receive the run's alerts (EnvironmentAlerting).
	AlertSinks []AlertSink
	// PermitAddrs, Limits, ReadOnly and MaxChangeBytes are as in
	// EnvOptions.
	PermitAddrs    []netip.Prefix
	Limits         sandbox.Limits
	ReadOnly       []string
	MaxChangeBytes int64

	// Observer, Logger, Tracing and Metrics are the runtime's
	// (runtime.Runtime).
	Observer runtime.Observer
	Logger   *slog.Logger
	Tracing  runtime.Tracing
	Metrics  runtime.Metrics
	// Secrets names further credential variables to redact; the agents'
	// APIKeyEnv is added without being named here.
	Secrets []string
}

// Options are the node types' part of c, for a registry of its own
// (NewRegistryWith) or Register.
func (c Config) Options() Options {
	return Options{Agent: c.Agent, AllowEnv: c.AllowEnv, AllowEndpoints: c.AllowEndpoints, ReviewDir: c.ReviewDir}
}

// EnvOptions are the sandboxed workspace's part of c.
func (c Config) EnvOptions() EnvOptions {
	caches := c.Caches
	if caches == nil {
		caches = GoCaches()
	}
	return EnvOptions{Repo: c.Repo, Rev: c.Rev, CacheDir: c.CacheDir, AllowUnconfined: c.AllowUnconfined,
		AllowEnv: c.AllowEnv, AllowEndpoints: c.AllowEndpoints, OnAlert: c.OnAlert, PermitAddrs: c.PermitAddrs, Limits: c.Limits,
		ReadOnly: c.ReadOnly, Caches: caches, ColdBuilds: c.ColdBuilds, MaxChangeBytes: c.MaxChangeBytes}
}

// Environment is the Prepare hook of c's sandboxed workspace; engines that
// build one runtime for runs on many repositories (the Temporal worker)
// make one per run with Repo and Rev set.
func (c Config) Environment() runtime.Prepare {
	return EnvironmentAlerting(c.EnvOptions(), c.AlertSinks)
}

// NewRuntime returns a runtime with the built-in node types configured by
// c and a sandboxed workspace for each run: the one way sandgate's own
// commands assemble a runtime.
func NewRuntime(c Config) *runtime.Runtime {
	secrets := slices.Clone(c.Secrets)
	if c.Agent.APIKeyEnv != "" {
		// A key under a name that does not look like a credential is
		// still one.
		secrets = append(secrets, c.Agent.APIKeyEnv)
	}
	return &runtime.Runtime{
		Registry: NewRegistryWith(c.Options()),
		RunsDir:  c.RunsDir,
		Observer: c.Observer,
		Logger:   c.Logger,
		Tracing:  c.Tracing,
		Metrics:  c.Metrics,
		Secrets:  secrets,
		Prepare:  c.Environment(),
	}
}
