package main

import (
	"testing"

	"github.com/sandgate/sandgate/runtime/runtimetest"
)

// TestTicketConforms runs the node conformance suite against the ticket
// type: its declaration, results and outputs, concurrent attempts on one
// instance (run under -race), cancellation and a real run.
func TestTicketConforms(t *testing.T) {
	runtimetest.Run(t, runtimetest.Case{Type: TicketType(), Body: "queue: " + t.TempDir() + "\ntitle: hello"})
}
