package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sync"
)

// exchange is one recorded request and response.
type exchange struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// recordModel appends every successful exchange of the model it wraps to
// a file, in the wire form, for replay.
type recordModel struct {
	Model
	mu   *sync.Mutex // shared by all recorders of one file
	path string
}

// Chat implements Model.
func (m *recordModel) Chat(ctx context.Context, req Request) (*Response, error) {
	resp, err := m.Model.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	body, _ := json.Marshal(wireRequest(req))
	out, _ := json.Marshal(toWire(resp))
	line, _ := json.Marshal(exchange{Request: compactJSON(body), Response: compactJSON(out)})
	m.mu.Lock()
	defer m.mu.Unlock()
	// A recording is a convenience: failing to write it must not fail the
	// run that is being recorded.
	f, ferr := os.OpenFile(m.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return resp, nil
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
	return resp, nil
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		q, _ := json.Marshal(string(b))
		return q
	}
	return buf.Bytes()
}
