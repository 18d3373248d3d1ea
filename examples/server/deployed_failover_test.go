package main

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// TestClusterFailoverUnderLoad: on a 3-master Cluster with a replica per master,
// goroutines hammer two client addresses, one whose "api" state lives on master 1 and
// one on master 0; master 1 is killed, and after the node timeout (1 s) its replica
// is promoted. Meanwhile the whole Cluster answers CLUSTERDOWN, so both keys follow
// their failure mode. On every router:
//
//   - no answer is other than 200 or 429: no 5xx while the Cluster fails over;
//   - both keys stay within burst + rate × elapsed (+10%) over the whole run;
//   - the killed master's key is decided by Redis again, on the promoted replica,
//     within 5 s of the promotion (a single request changes its state there), and
//     stays within the bound from then on.
func TestClusterFailoverUnderLoad(t *testing.T) {
	const failing, healthy = 1, 0
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			cluster := redistest.StartClusterWithReplicas(t, 3, time.Second)
			srv := clusterServer(t, cluster, router, loadPolicyArgs...)
			followWallClock(t, srv.clock)
			ipOn := map[int]string{}
			for host := 2; host < 250 && (ipOn[failing] == "" || ipOn[healthy] == ""); host++ {
				ip := fmt.Sprintf("127.0.0.%d", host)
				if m := masterIndex(t, cluster, apiStateKey(srv, "ip:"+ip)); (m == failing || m == healthy) && ipOn[m] == "" {
					ipOn[m] = ip
				}
			}
			counts := map[int]*phaseCounts{failing: {}, healthy: {}}
			stops := map[int]chan struct{}{failing: make(chan struct{}), healthy: make(chan struct{})}
			wgs := map[int]*sync.WaitGroup{failing: {}, healthy: {}}
			start := time.Now()
			for _, m := range []int{failing, healthy} {
				hammer(t, srv, ipOn[m], 2, counts[m], stops[m], wgs[m])
			}
			time.Sleep(700 * time.Millisecond)
			counts[failing].phase.Store(1)
			counts[healthy].phase.Store(1)
			killed, promoted := failOver(t, cluster, failing)

			// Decided by Redis again: with the key quiet, one request changes its
			// state on the promoted replica.
			close(stops[failing])
			wgs[failing].Wait()
			key := apiStateKey(srv, "ip:"+ipOn[failing])
			redis := cluster.Replicas[failing].NewClient()
			defer redis.Close()
			recovered := decidedByRedisAgain(t, srv, redis, key, ipOn[failing], counts[failing], promoted.Add(5*time.Second))
			recoveredAt := time.Now()
			counts[failing].phase.Store(2)
			stops[failing] = make(chan struct{})
			hammer(t, srv, ipOn[failing], 2, counts[failing], stops[failing], wgs[failing])
			time.Sleep(500 * time.Millisecond)
			close(stops[failing])
			close(stops[healthy])
			wgs[failing].Wait()
			wgs[healthy].Wait()
			end := time.Since(start)

			t.Logf("%s: master %d killed at %v, its replica promoted %v later; its key decided by Redis again %v after the promotion (recovered: %v)",
				router, failing, killed.Sub(start).Round(time.Millisecond), promoted.Sub(killed).Round(time.Millisecond), recoveredAt.Sub(promoted).Round(time.Millisecond), recovered)
			t.Logf("%s: the server's warnings:\n%s", router, grepLines(srv.logs.String(), "level=WARN"))
			for _, m := range []int{failing, healthy} {
				cm := counts[m]
				total := cm.admitted[0].Load() + cm.admitted[1].Load() + cm.admitted[2].Load()
				t.Logf("%s: key on master %d (%s): admitted %d over %v, bound %d;%s", router, m, ipOn[m], total, end.Round(time.Millisecond),
					tokenBound(loadBurst, loadPerSecond, end), cm)
				for p := range cm.other {
					if n := cm.other[p].Load(); n != 0 {
						t.Errorf("key on master %d, phase %d: %d answers neither 200 nor 429", m, p, n)
					}
				}
				if bound := tokenBound(loadBurst, loadPerSecond, end); total > bound {
					t.Errorf("key on master %d: %d admitted over %v, bound %d", m, total, end, bound)
				}
			}
			if !recovered {
				t.Errorf("the killed master's key was not decided by Redis within 5 s of its replica's promotion")
			}
			afterRecovery := time.Since(recoveredAt)
			if got, bound := counts[failing].admitted[2].Load(), tokenBound(loadBurst, loadPerSecond, afterRecovery); got > bound {
				t.Errorf("the killed master's key: %d admitted after its return over %v, bound %d", got, afterRecovery, bound)
			}
		})
	}
}
