package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sandgate/sandgate/sandbox"
)

// TestProxyAlertsOneAtATime: requests refused at once on several
// connections reach OnAlert one call at a time, so a callback writing to
// a terminal or a log needs no lock of its own (the CLI's had none, and
// two refusals at once raced on its stderr). The callback below appends
// without a lock: under -race, two calls at once are a failure.
func TestProxyAlertsOneAtATime(t *testing.T) {
	var alerts []sandbox.Alert
	p := &sandbox.Proxy{Allow: []string{"allowed.test:80"}, OnAlert: func(a sandbox.Alert) { alerts = append(alerts, a) }}
	sock := filepath.Join(t.TempDir(), "proxy.sock")
	if err := p.Listen(sock); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("unix", sock)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET http://evil%d.test/ HTTP/1.1\r\nHost: evil%d.test\r\n\r\n", i, i)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || res.StatusCode != http.StatusForbidden {
				t.Errorf("request %d: %v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	p.Close() // waits for the connections' handlers, alerts included
	if len(alerts) != n {
		t.Fatalf("%d alerts for %d refusals: %+v", len(alerts), n, alerts)
	}
}
