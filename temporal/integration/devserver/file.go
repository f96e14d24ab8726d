package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/testing/freeport"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

// fileNamespace is the namespace of a file-backed server: fixed, so a
// restarted server names the one its runs are in (temporaltest's is
// random per start).
const fileNamespace = "sandgate"

// fileServer is a server like temporaltest's but on the SQLite file db
// (created with its schema on first use, reopened after) and with its
// frontend on 127.0.0.1:port, so it can be stopped, even killed, and
// started again where its clients left it. temporaltest cannot: it fixes
// Ephemeral to true (in-memory SQLite) and its frontend port to a free
// one, and the package that would take a file (temporaltest/internal)
// cannot be imported. This is what that package does in file mode, and
// what the Temporal CLI's `server start-dev --db-filename` does, from
// the server's public packages, all of which temporaltest already
// compiles.
func fileServer(db string, port int) (temporal.Server, string, error) {
	sqlCfg := &config.SQL{PluginName: sqliteplugin.PluginName, DatabaseName: db,
		ConnectAttributes: map[string]string{
			"mode":  "rwc",
			"setup": "true", // create the schema unless the file has it
			// WAL with synchronous=NORMAL loses nothing when the process
			// dies (only on a power cut) and spares an fsync per commit.
			"journal_mode": "wal",
			"synchronous":  "normal",
		}}
	host := "127.0.0.1"
	hostPort := fmt.Sprintf("%s:%d", host, port)
	cfg := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host},
			PProf:      config.PProf{Port: freeport.MustGetFreePort()},
		},
		Persistence: config.Persistence{
			DefaultStore: sqliteplugin.PluginName, VisibilityStore: sqliteplugin.PluginName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
		},
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10, MasterClusterName: "active", CurrentClusterName: "active",
			ClusterInformation: map[string]cluster.ClusterInformation{
				"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: hostPort},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			"frontend": service(port), "history": service(0), "matching": service(0), "worker": service(0),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: hostPort},
	}
	// The schema before the namespace: the plugin's setup attribute makes
	// it on the first connection, and CreateNamespaces skips one that is
	// there already (a restart).
	if err := forgetMembers(db); err != nil {
		return nil, "", err
	}
	ns, err := sqlite.NewNamespaceConfig("active", fileNamespace, false, nil)
	if err != nil {
		return nil, "", err
	}
	if err := sqlite.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, "", fmt.Errorf("namespace: %w", err)
	}
	s, err := temporal.NewServer(
		temporal.WithConfig(cfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(log.NewNoopLogger()),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
		}),
	)
	if err != nil {
		return nil, "", err
	}
	return s, hostPort, s.Start()
}

// service is one service's ports on loopback: port, or a free one for 0.
func service(port int) config.Service {
	if port == 0 {
		port = freeport.MustGetFreePort()
	}
	return config.Service{RPC: config.RPC{GRPCPort: port, MembershipPort: freeport.MustGetFreePort(), BindOnIP: "127.0.0.1"}}
}

// forgetMembers clears the membership a killed server left in its file.
// A restarted server's services bind new ports; with the dead ones still
// listed as alive (heartbeats within 20 s), each service's ringpop joins
// them as seeds and waits for them (up to MaxJoinDuration) before its ring
// serves, while the frontend already answers: every run stalled ~50 s
// after a restart. Only one server uses a file (the caller killed the
// one before), so every listed member is dead.
func forgetMembers(db string) error {
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		return fmt.Errorf("forget the members of %s: %w", db, err)
	}
	defer conn.Close()
	_, err = conn.Exec("DELETE FROM cluster_membership")
	if err != nil && !strings.Contains(err.Error(), "no such table") { // killed before its schema was made
		return fmt.Errorf("forget the members of %s: %w", db, err)
	}
	return nil
}
