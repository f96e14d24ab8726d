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
//
// With -db FILE it keeps its state in the SQLite file FILE (made on the
// first start) and serves on 127.0.0.1:PORT (-port), in namespace
// "sandgate": started again on the same file and port, even after a
// SIGKILL, it carries on with the runs it had, which is how the tests
// restart the server under running workers (see file.go). Without -db it
// is temporaltest, in memory, on a free port, as before.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/testing/freeport"
	"go.temporal.io/server/temporaltest"
)

func main() {
	db := flag.String("db", "", "keep state in this SQLite `file` (default: in memory)")
	port := flag.Int("port", 0, "frontend port on 127.0.0.1 with -db (default: a free one)")
	flag.Parse()
	var (
		c            client.Client
		hostPort, ns string
		stop         func()
	)
	if *db == "" {
		ts := temporaltest.NewServer()
		c, hostPort, ns, stop = ts.GetDefaultClient(), ts.GetFrontendHostPort(), ts.GetDefaultNamespace(), ts.Stop
	} else {
		if *port == 0 {
			*port = freeport.MustGetFreePort()
		}
		s, hp, err := fileServer(*db, *port)
		if err != nil {
			fmt.Fprintln(os.Stderr, "devserver:", err)
			os.Exit(1)
		}
		hostPort, ns, stop = hp, fileNamespace, func() { _ = s.Stop() }
		if c, err = client.Dial(client.Options{HostPort: hp, Namespace: ns,
			Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))}); err != nil {
			fmt.Fprintln(os.Stderr, "devserver: dial:", err)
			os.Exit(1)
		}
	}
	defer stop()
	// Registering is idempotent: a restarted file-backed server has them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ns,
		SearchAttributes: map[string]enums.IndexedValueType{
			"SandgateStatus":     enums.INDEXED_VALUE_TYPE_KEYWORD,
			"SandgateBlueprint":  enums.INDEXED_VALUE_TYPE_KEYWORD,
			"SandgateRepository": enums.INDEXED_VALUE_TYPE_KEYWORD,
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "devserver: register search attributes:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", hostPort, ns)
	_, _ = io.Copy(io.Discard, os.Stdin)
}
