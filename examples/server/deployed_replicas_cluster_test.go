package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestReplicasShareAnAccountThroughAStuckClusterMaster: two instances of the server,
// started with -replicas 2 and -on-store-error local, over one 3-master Cluster;
// nethttp beside chi, then gin beside echo. The account (5 a minute), the addresses
// and their /24 live on three different masters. Each replica checks one wrong
// password for the account from its own address, so one last heard 4 left and the
// other 3. The account's master is stopped (SIGSTOP) for 2.5 s while both send
// wrong passwords every 5 ms, each from its address; then it continues and the
// attempts go on for 3 s. The stop outlasts the second the slot's confirming probe
// waits for the stopped master: stopped 1.5 s, a replica on a loaded machine (CI,
// under -race) never reached Local mode.
//
// The stuck master holds only the account: its logins are slow calls, then, once
// the slot's breaker opens, Local mode, both from each replica's share of its own
// last answer, and on SIGCONT each replica settles what it spent. The addresses and
// the subnet stay on Redis throughout. So the account admits at most its 5 attempts
// in all, every answer is 401 or 429, and afterwards a fresh account from each
// address is admitted on both replicas.
func TestReplicasShareAnAccountThroughAStuckClusterMaster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	for n, pair := range [][2]string{{"nethttp", "chi"}, {"gin", "echo"}} {
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			var replicas [2]*testServer
			for i, router := range pair {
				replicas[i] = clusterServer(t, cluster, router, "-replicas", "2", "-on-store-error", "local")
				followWallClock(t, replicas[i].clock)
			}
			lt := placeLogin(t, cluster, replicas[0], fmt.Sprintf("127.%d.2", 60+n))
			for i, srv := range replicas {
				if r := lt.login(t, srv, lt.addrs[i], lt.user, "guess"); r.status != http.StatusUnauthorized {
					t.Fatalf("%s: the attempt before the stop: %d, want 401", pair[i], r.status)
				}
			}
			stuck := cluster.Servers[lt.accountOn]
			if err := stuck.Pause(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stuck.Resume() })
			flood := newLoginFlood()
			for i, srv := range replicas {
				flood.send(lt.clients[lt.addrs[i]], srv, lt.user)
			}
			time.Sleep(2500 * time.Millisecond)
			during := flood.admitted.Load()
			if err := stuck.Resume(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			flood.end(t)

			admitted := flood.admitted.Load() + 2
			t.Logf("%s+%s: account on master %d (stopped 2.5 s), addresses on %d, subnet on %d: %d attempts admitted of 5 (%d during the stop), %d refused",
				pair[0], pair[1], lt.accountOn, lt.addrOn, lt.subnetOn, admitted, during, flood.refused.Load())
			if admitted > 5 {
				t.Errorf("the account admitted %d attempts through two replicas, want at most 5", admitted)
			}
			for i, srv := range replicas {
				warnings := grepLines(srv.logs.String(), "level=WARN")
				t.Logf("%s: the server's warnings:\n%s", pair[i], warnings)
				if !strings.Contains(warnings, "policy account falls back to local mode") {
					t.Errorf("%s: the account never fell back to local mode: the stop tested slow calls alone", pair[i])
				}
				lt.freshAccountsAdmitted(t, srv, pair[i])
			}
		})
	}
}
