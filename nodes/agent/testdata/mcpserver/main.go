// Command mcpserver is a test MCP server: over stdio it is started in the
// box by an agent's mcp: entry; with -http it serves streamable HTTP on
// loopback for the proxy tests. Its probe tool reports where it runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type probeIn struct {
	Path string `json:"path" jsonschema:"a host file to try to read"`
	Dial string `json:"dial" jsonschema:"host:port to try to reach"`
}

type empty struct{}

// probe reports its uid, whether it can read path, and whether it can
// reach dial; every attempt's outcome goes into the text.
func probe(_ context.Context, _ *mcp.CallToolRequest, in probeIn) (*mcp.CallToolResult, any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "uid=%d", os.Getuid())
	if in.Path != "" {
		if data, err := os.ReadFile(in.Path); err != nil {
			fmt.Fprintf(&b, " read=refused")
		} else {
			fmt.Fprintf(&b, " read=%q", data)
		}
	}
	if in.Dial != "" {
		if c, err := net.DialTimeout("tcp", in.Dial, 2*time.Second); err != nil {
			fmt.Fprintf(&b, " dial=refused")
		} else {
			c.Close()
			fmt.Fprintf(&b, " dial=connected")
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil, nil
}

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "probe", Description: "Report the uid, and try to read a file and reach an address."}, probe)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit at once, mid-call."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "crashing on purpose")
		os.Exit(3)
		return nil, nil, nil
	})
	if *addr != "" {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
		log.Fatal(http.ListenAndServe(*addr, h))
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
