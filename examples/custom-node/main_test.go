package main

import (
	"testing"

	"github.com/sandgate/sandgate/runtime/runtimetest"
)

func TestTicketConforms(t *testing.T) {
	runtimetest.Run(t, runtimetest.Config{Type: TicketType(), Body: "queue: " + t.TempDir() + "\ntitle: hello"})
}
