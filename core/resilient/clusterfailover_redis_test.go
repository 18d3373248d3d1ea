package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A master of a 3-master Cluster with replicas is killed under steady traffic from two
// replicas of a service (WithReplicas(2)). After the node timeout (1s) the Cluster
// fails the master and refuses every command (CLUSTERDOWN) until its replica is
// promoted; the clients follow the slots to it. A key on the killed master and a key
// on a healthy one each stay within burst + rate × elapsed + 10% over the whole run,
// both services end on shared enforcement, and the promoted replica holds the key's
// replicated state. Unbatched and batched.
func TestRedisClusterFailoverStaysWithinBound(t *testing.T) {
	eachBatching(t, func(t *testing.T, storeOptions []redisstore.Option) {
		c := redistest.StartClusterWithReplicas(t, 3, time.Second)
		p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20))
		failingKey := clusterKey(t, c, p, 0, "ip:198.51.100.")
		healthyKey := clusterKey(t, c, p, 1, "ip:203.0.113.")
		counter := &fallbackCounter{}
		stores := dialStoresWith(t, c.Addrs(), 2, storeOptions, resilient.WithReplicas(2), resilient.WithMonitor(counter))
		stop := make(chan struct{})
		failing := drive(stores, p, failingKey, 8, 5*time.Millisecond, stop)
		healthy := drive(stores, p, healthyKey, 8, 5*time.Millisecond, stop)
		after(t, time.Second, c.Servers[0].Kill)
		killed := time.Now()
		if err := c.WaitPromoted(0); err != nil {
			close(stop)
			failing.wait()
			healthy.wait()
			t.Fatal(err)
		}
		promoted := time.Since(killed)
		back := backOnShared(stores, "api", killed)
		time.Sleep(2 * time.Second) // traffic on the promoted replica
		close(stop)
		check(t, "key on the killed master, GCRA 10/s burst 20", failing, 10, 20)
		check(t, "key on a healthy master, GCRA 10/s burst 20", healthy, 10, 20)
		t.Logf("replica promoted %v after the kill; both services back on Redis after %v; fallback transitions: %d into local, %d back; admissions by decider: %s",
			promoted.Round(10*time.Millisecond), back.Round(10*time.Millisecond), counter.enter.Load(), counter.leave.Load(), counter.via())
		if back == 0 {
			t.Fatalf("the services were not back on Redis 10s after the promotion (breakers %v, %v)", stores[0].Breaker(), stores[1].Breaker())
		}
		keyName, err := redisstore.Dial(c.Addrs()[1:])
		if err != nil {
			t.Fatal(err)
		}
		defer keyName.Close()
		promotedClient := c.Replicas[0].NewClient()
		defer promotedClient.Close()
		if n, err := promotedClient.Exists(context.Background(), keyName.Key(p, failingKey)).Result(); err != nil || n != 1 {
			t.Errorf("the promoted replica does not hold the key's state: %d %v", n, err)
		}
	})
}
