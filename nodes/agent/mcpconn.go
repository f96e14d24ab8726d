package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandgate/sandgate/sandbox"
)

// Bounds on what a server may send: one JSON-RPC message, an HTTP body,
// and a stdio server's output over its life.
const (
	maxMCPMessage   = 4 << 20
	maxMCPLifetime  = 256 << 20
	maxMCPListed    = 1024 // tools kept from one server's (paginated) list
	sandgateVersion = "1"
)

// liveConn is a running server's session.
type liveConn struct {
	cfg  MCPServer
	sess *mcp.ClientSession
	list []*mcp.Tool
	proc *sandbox.Process // stdio servers
	mu   sync.Mutex
	dead error
}

// connect starts (stdio, in the box) or reaches (HTTP, through the proxy)
// a server, and lists its tools, within the server's timeout. life is the
// session's context: the server process lives as long as it.
func connect(life context.Context, s MCPServer, starter Starter, proxy string) (*liveConn, error) {
	c := &liveConn{cfg: s}
	var t mcp.Transport
	if s.URL != "" {
		if proxy == "" {
			return nil, fmt.Errorf("MCP server %s: an HTTP server is reached only through the run's egress proxy, and sandbox.network is not allowlist", s.Name)
		}
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: proxyClient(proxy), MaxRetries: -1,
			DisableStandaloneSSE: true, MaxEventSize: maxMCPMessage}
	} else {
		if starter == nil {
			return nil, fmt.Errorf("MCP server %s: the run's sandbox cannot start long-lived commands", s.Name)
		}
		argv := s.Command
		if len(s.Env) > 0 {
			argv = append(append([]string{"env"}, s.Env...), argv...)
		}
		p, err := starter.Start(life, sandbox.Command{Args: argv, OutputBytes: maxMCPLifetime})
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %w", s.Name, err)
		}
		c.proc = p
		t = &mcp.IOTransport{Reader: procOut{p}, Writer: procIn{p}, MaxLineLength: maxMCPMessage}
	}
	ctx, cancel := context.WithTimeout(life, s.Timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandgate", Version: sandgateVersion}, nil)
	sess, err := client.Connect(ctx, t, nil)
	if err == nil {
		c.sess = sess
		for tool, terr := range sess.Tools(ctx, nil) {
			if terr != nil {
				err = terr
				break
			}
			if len(c.list) == maxMCPListed {
				err = fmt.Errorf("it lists more than %d tools", maxMCPListed)
				break
			}
			c.list = append(c.list, tool)
		}
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("MCP server %s: start and list tools: %w%s", s.Name, err, c.stderr())
	}
	return c, nil
}

func (c *liveConn) tools() []*mcp.Tool { return c.list }

func (c *liveConn) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	c.mu.Lock()
	dead := c.dead
	c.mu.Unlock()
	if dead != nil {
		return "", dead
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("no answer within %s", c.cfg.Timeout)
		}
		if c.exited() {
			c.mu.Lock()
			c.dead = fmt.Errorf("the server has stopped (%w)%s", err, c.stderr())
			err = c.dead
			c.mu.Unlock()
		}
		return "", err
	}
	return resultText(res), nil
}

// exited reports whether a stdio server's process has ended.
func (c *liveConn) exited() bool {
	if c.proc == nil {
		return false
	}
	select {
	case <-c.proc.Done():
		return true
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

// stderr is the end of a dead stdio server's standard error, for errors.
func (c *liveConn) stderr() string {
	if c.proc == nil {
		return ""
	}
	select {
	case <-c.proc.Done():
	default:
		return ""
	}
	res, err := c.proc.Wait()
	if err != nil || res == nil {
		return ""
	}
	tail := strings.TrimSpace(string(res.Output))
	if len(tail) > 500 {
		tail = "…" + tail[len(tail)-500:]
	}
	return fmt.Sprintf("; exit code %d, stderr: %q", res.ExitCode, tail)
}

func (c *liveConn) close() {
	if c.sess != nil {
		done := make(chan struct{})
		go func() { _ = c.sess.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
	}
	if c.proc != nil {
		c.proc.Kill()
		_, _ = c.proc.Wait()
	}
}

// procOut and procIn are a box process's output and input as the SDK's
// stream transport wants them; closing the output kills the process.
type procOut struct{ p *sandbox.Process }

func (o procOut) Read(b []byte) (int, error) { return o.p.Read(b) }
func (o procOut) Close() error               { o.p.Kill(); return nil }

type procIn struct{ p *sandbox.Process }

func (i procIn) Write(b []byte) (int, error) { return i.p.Write(b) }
func (i procIn) Close() error                { return i.p.CloseStdin() }

// proxyClient sends every request through the run's egress proxy (its
// unix socket): https through CONNECT, http as absolute-form requests. The
// proxy applies sandbox.allow_hosts and the address policy and logs each
// decision, exactly as for the box's own traffic; the client never dials
// a server itself.
func proxyClient(sock string) *http.Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "sandgate-egress-proxy"}),
		DialContext: dial, ResponseHeaderTimeout: 5 * time.Minute,
		// The proxy serves one request per connection.
		DisableKeepAlives: true}
	// A redirect is not followed: the proxy would still apply the
	// allowlist, but the session's requests belong to the server the
	// blueprint names, not to wherever it points.
	noRedirect := func(r *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the MCP server redirected to %s; redirects are not followed", r.URL.Redacted())
	}
	return &http.Client{Transport: boundedBodies{tr}, CheckRedirect: noRedirect}
}

// boundedBodies fails a response body past maxMCPMessage, and turns the
// proxy's refusal into an error that says so.
type boundedBodies struct{ rt http.RoundTripper }

func (b boundedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if why := resp.Header.Get("X-Sandgate-Deny"); resp.StatusCode == http.StatusForbidden && why != "" {
		resp.Body.Close()
		return nil, fmt.Errorf("the egress proxy denied %s: %s (sandbox.allow_hosts governs MCP servers too)", r.URL.Host, why)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxMCPMessage}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errors.New("MCP response larger than 4 MiB")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }
