package nodetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/nodes"
)

// AlertReceiver is a JSON alert sink on loopback: it keeps every event it
// is posted and its raw body.
type AlertReceiver struct {
	URL    string
	mu     sync.Mutex
	events []nodes.AlertEvent
	bodies []string
}

// NewAlertReceiver starts a receiver, closed when the test ends.
func NewAlertReceiver(t testing.TB) *AlertReceiver {
	r := &AlertReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var e nodes.AlertEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Errorf("alert receiver: %s: %v", b, err)
		}
		r.mu.Lock()
		r.events, r.bodies = append(r.events, e), append(r.bodies, string(b))
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Sink is the receiver as a run's sink.
func (r *AlertReceiver) Sink() nodes.AlertSink {
	return nodes.AlertSink{Format: nodes.AlertJSON, URL: r.URL, Name: "receiver"}
}

// Events are the events received so far, and their bodies.
func (r *AlertReceiver) Events() ([]nodes.AlertEvent, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]nodes.AlertEvent(nil), r.events...), append([]string(nil), r.bodies...)
}
