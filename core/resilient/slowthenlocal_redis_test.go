package resilient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestLocalAllowanceRecoversFromTheSlowCallsItAbsorbed as deployed: the last answer
// comes from the scripts, through Dial's client, and the outage is the Redis process
// killed (a standalone server, or the Cluster master that holds the key), so the slow
// calls fail as go-redis reports a dead server. After each pause long enough for the
// policy to recover, Local mode admits the replica's whole share, not that share less
// what the slow calls spent.
func TestRedisLocalAllowanceRecoversAfterTheServerDies(t *testing.T) {
	cases := []struct {
		p        core.Policy
		replicas int
		slow     int // admitted by slow calls, from the last answer
		whole    int // the replica's whole share
	}{
		{core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20)), 1, 4, 20},
		{core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20)), 2, 3, 10},
	}
	deployments := []struct {
		name  string
		start func(t *testing.T, p core.Policy) (addrs []string, key string, kill func() error)
	}{
		{"standalone", func(t *testing.T, _ core.Policy) ([]string, string, func() error) {
			srv := redistest.StartServer(t)
			return []string{srv.Addr}, "k", srv.Kill
		}},
		{"cluster", func(t *testing.T, p core.Policy) ([]string, string, func() error) {
			c := redistest.StartCluster(t, 3)
			return c.Addrs(), clusterKey(t, c, p, 0, "k"), c.Servers[0].Kill
		}},
	}
	for _, d := range deployments {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s/%d-replicas", d.name, tc.p.Algorithm(), tc.replicas), func(t *testing.T) {
				addrs, key, kill := d.start(t, tc.p)
				clock := storetest.NewClock()
				shared, err := redisstore.Dial(addrs, redisstore.WithClock(clock.Now))
				if err != nil {
					t.Fatal(err)
				}
				r := newRigOver(t, clock, shared, resilient.WithReplicas(tc.replicas))
				if res := r.decide(t, tc.p, key); !res.Allowed || res.Remaining != 19 {
					t.Fatalf("healthy: %+v, want admitted by Redis with 19 of 20 left", res)
				}
				if err := kill(); err != nil {
					t.Fatal(err)
				}
				if got := admittedOf(t, r, tc.p, key, tc.slow); got != tc.slow {
					t.Fatalf("slow calls: %d admitted of %d", got, tc.slow)
				}
				tripFor(t, r.store, core.Request{Policy: tc.p, Key: key})
				for pause := range 3 {
					clock.Advance(5 * time.Second)
					if got := admittedOf(t, r, tc.p, key, 2*tc.whole); got != tc.whole {
						t.Fatalf("Local mode, after pause %d: %d admitted, want the replica's whole share, %d", pause+1, got, tc.whole)
					}
				}
			})
		}
	}
}
