// Command devserver runs Temporal's in-process test server
// (go.temporal.io/server/temporaltest) for the integration tests. It is a
// module of its own so the server's dependencies (and the SDK and API
// versions it pins) stay apart from sandgate's and the runner's: the
// tests talk to it over gRPC on the loopback address only.
//
// The server is v1.30.8 on purpose: from v1.31 service/worker imports
// go.temporal.io/auto-scaled-workers and with it the Kubernetes and AWS
// clients (1,752 packages to compile, against 1,298 here), none of which
// a test server on loopback uses. v1.30.9 needs Go 1.26.10, newer than
// the module's toolchain. Its API (v1.62.2) is older than the runner's;
// the integration tests are what say the two still speak.
//
// It prints "HOST:PORT NAMESPACE" on one line once the server is ready,
// with the search attributes SandgateStatus, SandgateBlueprint and
// SandgateRepository registered, and stops when its standard input
// closes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/server/temporaltest"
)

func main() {
	ts := temporaltest.NewServer()
	defer ts.Stop()
	c := ts.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ts.GetDefaultNamespace(),
		SearchAttributes: map[string]enums.IndexedValueType{
			"SandgateStatus":     enums.INDEXED_VALUE_TYPE_KEYWORD,
			"SandgateBlueprint":  enums.INDEXED_VALUE_TYPE_KEYWORD,
			"SandgateRepository": enums.INDEXED_VALUE_TYPE_KEYWORD,
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "devserver: register search attributes:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", ts.GetFrontendHostPort(), ts.GetDefaultNamespace())
	_, _ = io.Copy(io.Discard, os.Stdin)
}
