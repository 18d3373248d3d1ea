package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestLayeredLimitsOnAStuckClusterMaster: the layered app of
// TestLayeredLimitsOverResilientRedis on resilient over a 3-master Cluster, one of
// whose masters is stopped (SIGSTOP). The client's keys are placed so that one
// layer lives on the stuck master and the other on healthy ones, both ways round:
//
//   - "app-wide on the stuck master": the app-wide "api" key is decided in Local
//     mode while the login's stack is decided by Redis; a login the stack refuses
//     gives back the api charge to the local allowance;
//   - "route on the stuck master": the login's per-address key is on the stuck
//     master, so the whole stack is decided in Local mode while "api" is decided by
//     Redis; a login the stack refuses gives back the api charge to Redis.
//
// Either way the client gets the answers of one decision per request, as on a
// healthy Cluster, and once the master is back it gets nothing more of "api".
func TestLayeredLimitsOnAStuckClusterMaster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	p := newLayeredPolicies(t)
	for n, router := range allRouters {
		for _, stuckLayer := range []string{"app-wide", "route"} {
			t.Run(stuckLayer+" on the stuck master/"+router, func(t *testing.T) {
				prefix := fmt.Sprintf("layers-stuck:%s:%s:", router, stuckLayer)
				key := func(q core.Policy, k string) string { return prefix + "{" + q.ID() + ":" + k + "}" }
				stuck := n % 3
				ip := layeredPeerOn(t, fmt.Sprintf("10.%d", 40+n), func(ip, subnet string) bool {
					apiOn := masterIndex(t, cluster, key(p.api, "ip:"+ip))
					attemptsOn := masterIndex(t, cluster, key(p.attempts, "ip:"+ip))
					subnetOn := masterIndex(t, cluster, key(p.subnetAttempts, "net4:"+subnet))
					if stuckLayer == "app-wide" {
						return apiOn == stuck && attemptsOn != stuck && subnetOn != stuck
					}
					return apiOn != stuck && attemptsOn == stuck && subnetOn != stuck
				})

				path, stuckReq := "/resource", core.Request{Policy: p.api, Key: "ip:" + ip}
				tripper := layeredPeerOn(t, fmt.Sprintf("10.%d", 140+n), func(other, _ string) bool {
					return masterIndex(t, cluster, key(p.api, "ip:"+other)) == stuck
				})
				if stuckLayer == "route" {
					path, stuckReq = "/login", core.Request{Policy: p.attempts, Key: "ip:" + ip}
					tripper = layeredPeerOn(t, fmt.Sprintf("10.%d", 140+n), func(other, _ string) bool {
						return masterIndex(t, cluster, key(p.attempts, "ip:"+other)) == stuck
					})
				}
				peer := ip + ":1000"
				store, clock := resilientOnVirtualClock(t, cluster.Addrs(), prefix)
				h := layeredApp(t, router, store, p)

				// A request before the outage: the Cluster client loads its slot map
				// from a master that still answers.
				if r := serveLocal(h, http.MethodGet, "/resource", "192.0.2.99:1000"); r.status != http.StatusOK {
					t.Fatalf("a request before the outage: %d %s", r.status, r.body)
				}
				if err := cluster.Servers[stuck].Pause(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cluster.Servers[stuck].Resume() })
				// Another client, whose key of the stuck layer lives on the stuck
				// master too, trips its slot's breaker (failed calls, then a
				// confirming probe); from then on every key of that master, the
				// client's too, is decided in Local mode without a call. The client
				// itself has sent nothing yet: Local mode starts it afresh.
				for start := time.Now(); store.BreakerFor(stuckReq) != resilient.BreakerOpen; {
					if time.Since(start) > 10*time.Second {
						t.Fatalf("the stuck master's keys did not go to Local mode within 10 s of another client's requests")
					}
					serveLocal(h, http.MethodGet, path, tripper+":1000")
					time.Sleep(10 * time.Millisecond)
					clock.Advance(50 * time.Millisecond) // for the breaker's confirming probe
				}
				checkLayered(t, h, peer)

				if err := cluster.Servers[stuck].Resume(); err != nil {
					t.Fatal(err)
				}
				waitWithClock(t, clock, 3*time.Second, "the slot's breaker to close after the master's return", func() bool {
					return store.BreakerFor(stuckReq) == resilient.BreakerClosed
				})
				if r := serveLocal(h, http.MethodGet, "/resource", peer); r.status != http.StatusTooManyRequests {
					t.Fatalf("back on Redis, the client whose api limit was spent: %d %s, want 429", r.status, r.body)
				}
			})
		}
	}
}

// layeredPeerOn is an address "host:1000" in one of the /24s prefix.0.0/24 to
// prefix.19.0/24 (prefix "10.40") for which fits reports true.
func layeredPeerOn(t *testing.T, prefix string, fits func(ip, subnet string) bool) string {
	t.Helper()
	for third := 0; third < 20; third++ {
		subnet := fmt.Sprintf("%s.%d.0/24", prefix, third)
		for host := 1; host < 255; host++ {
			if ip := fmt.Sprintf("%s.%d.%d", prefix, third, host); fits(ip, subnet) {
				return ip
			}
		}
	}
	t.Fatalf("no address in %s.0.0/24 to %s.19.0/24 fits", prefix, prefix)
	return ""
}
