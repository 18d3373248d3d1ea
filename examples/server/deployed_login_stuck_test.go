package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterLoginStackOnAStuckMaster: the login stack on a 3-master Cluster, with
// the account, the addresses and the subnet on three different masters. After 2
// attempts at an account (5 a minute), four addresses of one /24, whose address
// state lives on one master, send wrong passwords every 5 ms; one master is
// stopped (SIGSTOP) for stuckFor, then continued, and the attempts go on for 3 s.
//
// While the master is stuck, logins are decided from the last answers: the known
// address spends the account's 3 last attempts, and the addresses Redis never
// answered for are refused. On SIGCONT, the first admission charges Redis those 3
// (the settlement). Each router stops another master: with the addresses' one,
// logins that reached Redis while that charge was on its way were admitted by a
// Redis that did not hold it yet (6–7 attempts of 5); with the account's one, whose
// breaker opens, a login refused for the local allowance ended the settlement while
// another, admitted by Redis, was still settling (6 of 5). So the account admits at
// most 5 attempts in all, every answer is 401 or 429, and afterwards a fresh account
// from each address is admitted: Redis decides again.
func TestClusterLoginStackOnAStuckMaster(t *testing.T) {
	// Longer than a stuck master takes to be confirmed (a probe's second, after the
	// failures that ask for it): the user during the stop came in 9-12 tries of 100 ms
	// without -race, and a stop of 1.5 s left it refused in one CI run under -race.
	const stuckFor = 2500 * time.Millisecond
	cluster := redistest.StartCluster(t, 3)
	for n, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			srv := clusterServer(t, cluster, router, "-on-store-error", "local")
			followWallClock(t, srv.clock)
			lt := placeLogin(t, cluster, srv, fmt.Sprintf("127.%d.1", 20+n))
			lt.twoAttempts(t, srv)
			role, stopped := lt.masterToFail(n)
			fresh := accountOn(t, cluster, srv.app.login[0], "fresh-during", (stopped+1)%3)
			stuck := cluster.Servers[stopped]
			if err := stuck.Pause(); err != nil {
				t.Fatal(err)
			}
			stoppedAt := time.Now()
			t.Cleanup(func() { _ = stuck.Resume() })
			flood := lt.flood(srv)
			// A user logs in to an account on another master, from an address of the
			// flood, retrying every 100 ms as refused: admitted by Redis, or, when the
			// address's or the subnet's state is on the stuck master, by Local mode
			// once that slot's breaker has opened (its confirming probe has a second).
			var during response
			tries := 0
			for deadline := stoppedAt.Add(stuckFor - 100*time.Millisecond); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				tries++
				if during = lt.login(t, srv, lt.addrs[1], fresh, "guess"); during.status != http.StatusTooManyRequests {
					break
				}
			}
			time.Sleep(time.Until(stoppedAt.Add(stuckFor)))
			if err := stuck.Resume(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			flood.end(t)

			admitted := flood.admitted.Load() + 2
			t.Logf("%s: account on master %d, subnet on %d, addresses on %d; the %s master stopped %v: %d attempts admitted of 5, %d refused",
				router, lt.accountOn, lt.subnetOn, lt.addrOn, role, stuckFor, admitted, flood.refused.Load())
			if admitted > 5 {
				t.Errorf("the account admitted %d attempts, want at most 5", admitted)
			}
			t.Logf("%s: a user from %s during the stop: %d after %d tries, RateLimit %q", router, lt.addrs[1], during.status, tries, during.header.Get("RateLimit"))
			if during.status != http.StatusUnauthorized {
				t.Errorf("a user from %s during the stop: %d after %d tries, want 401 (admitted)", lt.addrs[1], during.status, tries)
			}
			lt.freshAccountsAdmitted(t, srv, router)
		})
	}
}
