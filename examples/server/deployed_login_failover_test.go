package main

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterLoginStackThroughAFailover: the login stack of
// TestClusterLoginStackOnAStuckMaster on a 3-master Cluster with a replica per
// master. After 2 attempts at the account, replicated, the four addresses flood it
// with wrong passwords; a master is killed (SIGKILL), and its replica promoted
// after the node timeout (1 s), the whole Cluster answering CLUSTERDOWN meanwhile;
// the flood goes on 2 s after the promotion. Each router kills another master: the
// addresses', the account's or the subnet's. The account admits at most its 5
// attempts, every answer is 401 or 429, and afterwards a fresh account from each
// address is admitted, by the promoted replica where its state moved.
func TestClusterLoginStackThroughAFailover(t *testing.T) {
	for n, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			cluster := redistest.StartClusterWithReplicas(t, 3, time.Second)
			srv := clusterServer(t, cluster, router, "-on-store-error", "local")
			followWallClock(t, srv.clock)
			lt := placeLogin(t, cluster, srv, fmt.Sprintf("127.%d.2", 20+n))
			lt.twoAttempts(t, srv)
			role, failing := lt.masterToFail(n)
			// Writes a master acknowledged and had not replicated are lost when it
			// dies (docs/redis.md); this test is about what the limiter does.
			waitReplicated(t, cluster.Servers[failing])

			flood := lt.flood(srv)
			killed, promoted := failOver(t, cluster, failing)
			time.Sleep(2 * time.Second)
			flood.end(t)

			admitted := flood.admitted.Load() + 2
			t.Logf("%s: account on master %d, subnet on %d, addresses on %d; the %s master killed, its replica promoted %v later: %d attempts admitted of 5, %d refused",
				router, lt.accountOn, lt.subnetOn, lt.addrOn, role, promoted.Sub(killed).Round(time.Millisecond), admitted, flood.refused.Load())
			t.Logf("%s: the server's warnings:\n%s", router, grepLines(srv.logs.String(), "level=WARN"))
			if admitted > 5 {
				t.Errorf("the account admitted %d attempts, want at most 5", admitted)
			}
			lt.freshAccountsAdmitted(t, srv, router)
		})
	}
}

// replicaOffset is the replication offset a master's INFO replication reports for
// its first replica.
var replicaOffset = regexp.MustCompile(`slave0:[^\r\n]*offset=(\d+)`)

// waitReplicated waits, for up to 5 s, until the first replica of master has
// acknowledged every write the master has taken.
func waitReplicated(t *testing.T, master *redistest.Server) {
	t.Helper()
	client := master.NewClient()
	defer client.Close()
	masterOffset := regexp.MustCompile(`master_repl_offset:(\d+)`)
	var info string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if info, err = client.Info(context.Background(), "replication").Result(); err != nil {
			t.Fatalf("INFO replication of %s: %v", master.Addr, err)
		}
		m, r := masterOffset.FindStringSubmatch(info), replicaOffset.FindStringSubmatch(info)
		if m != nil && r != nil && m[1] == r[1] {
			return
		}
	}
	t.Fatalf("the replica of %s did not catch up in 5 s:\n%s", master.Addr, info)
}
