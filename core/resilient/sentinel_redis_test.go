package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A Sentinel deployment fails over under steady traffic on one key from two replicas
// of a service (WithReplicas(2)), each with its DialUniversal client: the master is
// killed, the Sentinel promotes its replica, and the clients follow. While no master
// answers, Local mode continues from the last shared answers at the policy's rate; on
// the promoted master, which holds the key's replicated state, each service replica
// settles what it admitted meanwhile. The whole run stays within
// burst + rate × elapsed + 10%, and both service replicas end on shared enforcement.
//
// The failover admits at least 70% of the policy's rate: a client with go-redis's
// default dial retries (1.65s against a dead server) kept the breaker closed for
// 920ms after the kill, and the key, its last answer spent, admitted 5.4 per second
// there against 9.1 with DialUniversal's bounds. The same holds with batching.
func TestRedisSentinelFailoverStaysWithinBound(t *testing.T) {
	eachBatching(t, func(t *testing.T, storeOptions []redisstore.Option) {
		const name = "ratelimit"
		master := redistest.StartServer(t)
		replica := redistest.StartReplica(t, master)
		sentinel := redistest.StartSentinel(t, master, name, 500*time.Millisecond)
		if err := sentinel.WaitReplica(name, replica); err != nil {
			t.Fatal(err)
		}
		p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20))
		key := "ip:198.51.100.30"
		counter := &fallbackCounter{}
		sentinels := &redis.UniversalOptions{MasterName: name, Addrs: []string{sentinel.Addr}}
		stores := newStores(t, 2, func() (*redisstore.Store, error) { return redisstore.DialUniversal(sentinels, storeOptions...) },
			resilient.WithReplicas(2), resilient.WithMonitor(counter))

		stop := make(chan struct{})
		r := drive(stores, p, key, 8, 5*time.Millisecond, stop)
		after(t, time.Second, master.Kill)
		killed := time.Now()
		killedAt := killed.Sub(r.start)
		if err := sentinel.WaitMaster(name, replica.Addr); err != nil {
			close(stop)
			r.wait()
			t.Fatal(err)
		}
		promoted := time.Since(killed)
		back := backOnShared(stores, "api", killed)
		time.Sleep(2 * time.Second) // traffic on the promoted master
		close(stop)
		check(t, "Sentinel failover, two replicas, GCRA 10/s burst 20", r, 10, 20)
		t.Logf("replica promoted %v after the kill; both services back on Redis after %v; fallback transitions: %d into local, %d back; admissions by decider: %s",
			promoted.Round(10*time.Millisecond), back.Round(10*time.Millisecond), counter.enter.Load(), counter.leave.Load(), counter.via())
		if back == 0 {
			t.Fatalf("the services were not back on Redis 10s after the replica's promotion (breakers %v, %v)", stores[0].Breaker(), stores[1].Breaker())
		}
		during := r.admittedBetween(killedAt, killedAt+back)
		perSecond := float64(during) / back.Seconds()
		t.Logf("between the kill and the return: %d admitted in %v, %.1f per second (policy: 10, at least 7)", during, back.Round(10*time.Millisecond), perSecond)
		if perSecond < 7 {
			t.Errorf("the failover admitted %.1f per second, under 70%% of the policy's 10", perSecond)
		}
		promotedClient := replica.NewClient()
		defer promotedClient.Close()
		keyName, err := redisstore.DialUniversal(sentinels)
		if err != nil {
			t.Fatal(err)
		}
		defer keyName.Close()
		if n, err := promotedClient.Exists(context.Background(), keyName.Key(p, key)).Result(); err != nil || n != 1 {
			t.Errorf("the promoted master does not hold the key's state: %d %v", n, err)
		}
	})
}
