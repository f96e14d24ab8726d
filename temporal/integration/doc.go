// Package integration tests the Temporal runner against a real server.
package integration
