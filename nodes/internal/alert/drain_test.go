package alert

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestAlertHangingReceiver: a receiver that never answers does not hold
// the run's end past Drain; the alert is recorded undelivered, and a
// resumed run sends it to a sink of the same name.
func TestAlertHangingReceiver(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(stop)
	dir := t.TempDir()
	o := fast(Sink{Format: FormatJSON, URL: hang.URL, Name: "hook"})
	o.Drain = 200 * time.Millisecond
	d := open(t, dir, o)
	d.Raise(Event{Kind: KindCanary, Text: "forged"})
	if err := d.Close(); err == nil {
		t.Error("Close abandoned a delivery and said nothing")
	}
	if got := statuses(records(t, dir), "hook"); !slices.Equal(got, []string{StatusUndelivered}) {
		t.Fatalf("statuses %v, want undelivered", got)
	}

	rcv := newReceiver(t)
	o = fast(Sink{Format: FormatJSON, URL: rcv.URL, Name: "hook"})
	o.Resume = true
	d = open(t, dir, o)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.got()); n != 1 {
		t.Fatalf("the resumed run delivered %d, want the 1 owed", n)
	}
	if got := statuses(records(t, dir), "hook"); !slices.Equal(got, []string{StatusUndelivered, StatusDelivered}) {
		t.Errorf("statuses %v", got)
	}
}
