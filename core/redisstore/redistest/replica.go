package redistest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// StartReplica starts a redis-server for tb that replicates master, and stops it when
// tb ends. It returns once the replica has synchronised with master. It skips tb
// when redis-server is missing (see Require).
func StartReplica(tb testing.TB, master *Server) *Server {
	tb.Helper()
	host, port, err := net.SplitHostPort(master.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	admin := master.NewClient()
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := admin.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil { // sync at once, not 5s later
		tb.Fatalf("redistest: %s: %v", master.Addr, err)
	}
	replica := StartServer(tb, "--replicaof", host, port)
	if err := replica.waitSynced(); err != nil {
		tb.Fatal(err)
	}
	return replica
}

// waitSynced waits, for up to 15 s, until s reports its link to its master up.
func (s *Server) waitSynced() error {
	client := s.NewClient()
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var err error
	if poll(ctx, func(ctx context.Context) bool {
		var text string
		text, err = client.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(text, "master_link_status:up")
	}) {
		return nil
	}
	return fmt.Errorf("redistest: replica %s did not synchronise with its master: %v", s.Addr, err)
}
