package alert

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// receiver is a webhook receiver on loopback: it keeps every body and
// answers each request with the next of its scripted replies (200 once
// they run out).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	replies []func(http.ResponseWriter)
}

func newReceiver(t *testing.T, replies ...func(http.ResponseWriter)) *receiver {
	r := &receiver{replies: replies}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		var reply func(http.ResponseWriter)
		if len(r.replies) > 0 {
			reply, r.replies = r.replies[0], r.replies[1:]
		}
		if reply == nil {
			r.bodies = append(r.bodies, b)
		}
		r.mu.Unlock()
		if reply != nil {
			reply(w)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(r.Close)
	return r
}

// got is what the receiver accepted.
func (r *receiver) got() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

func status(code int, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

// records reads the run's delivery record.
func records(t *testing.T, runDir string) []Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, File))
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// statuses are the records' statuses for one sink, in order.
func statuses(recs []Record, sink string) []string {
	var out []string
	for _, r := range recs {
		if r.Sink == sink {
			out = append(out, r.Status)
		}
	}
	return out
}
