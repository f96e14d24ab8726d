// Package runfixture holds what the Temporal runner's tests in this module
// and in temporal/integration (a module of its own, under this path so
// Go's internal rule lets it import this) both build: the blueprints of
// the move and chaos tests and a sandboxed host's workspaces. It is for
// tests only; it imports nothing of package temporal, so that package's
// own tests can use it.
package runfixture
