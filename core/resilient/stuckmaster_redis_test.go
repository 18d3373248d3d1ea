package resilient_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// decideUntilOpen decides req until the breaker of its slot opens, failing t after
// 50 decisions.
func decideUntilOpen(t *testing.T, store *resilient.Store, req core.Request) {
	t.Helper()
	for i := 0; store.BreakerFor(req) != resilient.BreakerOpen; i++ {
		if i == 50 {
			t.Fatalf("the slot of %s did not open its breaker after %d decisions", req.Key, i)
		}
		if _, err := store.Decide(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

// admittedFromLastAnswers decides each of keys once on p, and fails t unless each is
// admitted from its last answer, with left units left.
func admittedFromLastAnswers(t *testing.T, store *resilient.Store, p core.Policy, keys []string, left int64) {
	t.Helper()
	for _, key := range keys {
		if res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: key}); err != nil || !res.Allowed || res.Remaining != left {
			t.Fatalf("%s, in another slot of the stopped master: %+v, %v; want admitted from its last answer (%d left)", key, res, err, left)
		}
	}
}

// TestStuckMasterSendsAllItsKeysToTheirFailureMode on a real 3-master Cluster: once
// one slot of a stopped master (SIGSTOP) has opened its breaker, 20 keys of that
// master in 20 other slots are decided in Local mode from their last answers without
// a call (redisstore.Store.Node names each key's master from the client's slot map),
// a key of a healthy master is decided by Redis, and after SIGCONT the master's keys
// are decided by Redis again.
func TestRedisClusterStuckMasterSendsAllItsKeysToLocalMode(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	rec := &recorder{}
	store := dialStoresWith(t, c.Addrs(), 1, nil, resilient.WithMonitor(rec))[0]
	namer, err := redisstore.Dial(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer namer.Close()
	first := clusterKey(t, c, p, 0, "user:first-")
	healthy := clusterKey(t, c, p, 1, "user:healthy-")
	slots := map[int]bool{resilient.SlotOf(namer.Key(p, first)): true}
	var others []string
	for i := 0; len(others) < 20; i++ {
		key := clusterKey(t, c, p, 0, fmt.Sprintf("user:%d-", i))
		if slot := resilient.SlotOf(namer.Key(p, key)); !slots[slot] {
			others, slots[slot] = append(others, key), true
		}
	}
	ctx := context.Background()
	req := func(key string) core.Request { return core.Request{Policy: p, Key: key} }
	for _, key := range append([]string{first, healthy}, others...) {
		if res, err := store.Decide(ctx, req(key)); err != nil || !res.Allowed {
			t.Fatalf("before the stop, %s: %+v, %v", key, res, err)
		}
	}

	if err := c.Servers[0].Pause(); err != nil {
		t.Fatal(err)
	}
	defer c.Servers[0].Resume()
	decideUntilOpen(t, store, req(first))
	before := len(rec.outcomes())
	admittedFromLastAnswers(t, store, p, others, 8)
	if res, err := store.Decide(ctx, req(healthy)); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
		t.Fatalf("%s, on a healthy master: %+v, %v; want decided by Redis", healthy, res, err)
	}
	got := rec.outcomes()[before:]
	for i, o := range got[:len(others)] {
		if o != "api:allowed/local" {
			t.Errorf("%s, on the stopped master: %s, want api:allowed/local (no call)", others[i], o)
		}
	}
	if o := got[len(others)]; o != "api:allowed/shared" {
		t.Errorf("%s, on a healthy master: %s, want api:allowed/shared", healthy, o)
	}

	if err := c.Servers[0].Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stopped master's keys back on Redis", func() bool { return store.BreakerFor(req(others[0])) == resilient.BreakerClosed })
	if res, err := store.Decide(ctx, req(others[0])); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
		t.Fatalf("%s after SIGCONT: %+v, %v; want decided by Redis", others[0], res, err)
	}
}
