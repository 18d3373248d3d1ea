package resilient_test

import (
	"context"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// Two Cluster masters that disagree on who serves a slot, as while a resharding or a
// failover's configuration spreads, answer each other's MOVED; go-redis follows its
// redirects and returns the last one. The Redis store took that for an unexpected
// reply, and the resilient store returned it as a permanent error: a 503 in every
// failure mode, and never a breaker that opened. It is the server unable to serve
// now: the key's decisions go to its failure mode, here Local, which continues from
// the last answer.
func TestRedisClusterRedirectLoopIsUnavailable(t *testing.T) {
	c := redistest.StartCluster(t, 2)
	shared, err := redisstore.Dial(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	// neverOpen: after 3 failures in a row a quiet service's breaker asks a probe,
	// whose failure opens it; on a loaded machine that landed before the 4th decision,
	// which then came from Local mode's allowance, not the last answer.
	store, err := resilient.New(shared, resilient.WithMode(resilient.Local), resilient.WithLogger(quietLogger()), resilient.WithMonitor(rec), neverOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	key, err := c.KeyOn(0, "user:", func(k string) string { return shared.Key(p, k) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := core.Request{Policy: p, Key: key}
	if res, err := store.Decide(ctx, req); err != nil || !res.Allowed {
		t.Fatalf("on a healthy Cluster: %+v, %v", res, err)
	}

	n0, n1 := c.Servers[0].NewClient(), c.Servers[1].NewClient()
	defer n0.Close()
	defer n1.Close()
	slot, err := n0.ClusterKeySlot(ctx, shared.Key(p, key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	id1, err := n1.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := n0.Del(ctx, shared.Key(p, key)).Err(); err != nil { // SETSLOT needs the slot empty
		t.Fatal(err)
	}
	// Master 0 now sends the slot to master 1, which still sends it back.
	if err := n0.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", id1).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		res, err := store.Decide(ctx, req)
		if err != nil {
			t.Fatalf("decision %d during the redirect loop: %v; want a failure mode's answer", i+1, err)
		}
		outcomes := rec.outcomes()
		if !res.Allowed || len(outcomes) == 0 || outcomes[len(outcomes)-1] != "api:allowed/last-shared" {
			t.Fatalf("decision %d during the redirect loop: %+v, decisions %v; want admitted from the last answer, not by Redis", i+1, res, outcomes)
		}
	}
}
