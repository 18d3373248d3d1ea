package resilient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A key of the wrong type (a string where the state should be) is a permanent error: returned in every mode,
// Open included, never admitted, logged at error level, and the breaker stays closed.
func TestRedisWrongTypeIsNeverAllowed(t *testing.T) {
	srv := redistest.StartServer(t)
	client := admin(t, srv)
	ctx := context.Background()
	for _, mode := range []resilient.Mode{resilient.Open, resilient.Closed, resilient.Local} {
		// A generous deadline: this is about the error, not the timing, and a first call
		// (dial and script load) on a loaded machine can outlast the usual one.
		r := newReplica(t, srv, resilient.WithMode(mode), resilient.WithDeadline(2*time.Second))
		key := "user:" + string(mode)
		if err := client.Set(ctx, r.redis.Key(tenPerMinute, key), "not a rate-limit state", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			res, err := r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: key})
			if !errors.Is(err, resilient.ErrPermanent) || res.Allowed {
				t.Fatalf("%s: %+v %v, want an error wrapping ErrPermanent", mode, res, err)
			}
		}
		if r.store.Breaker() != resilient.BreakerClosed || r.store.Fallback("api") {
			t.Fatalf("%s: a permanent error tripped the breaker or the fallback", mode)
		}
		if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "unexpected reply") {
			t.Fatalf("%s: not logged at error level:\n%s", mode, log)
		}
		families := scrapeRegistry(t, r.registry)
		if v := metricValue(families, "ratelimit_store_errors_total", "store", "redis", "kind", "permanent"); v != 5 {
			t.Fatalf("%s: %v permanent errors counted, want 5", mode, v)
		}
		if v := metricValue(families, "ratelimit_decisions_total", "policy", "api", "result", "error"); v != 5 {
			t.Fatalf("%s: %v error decisions counted, want 5", mode, v)
		}
	}
}

// The start-up check fails loudly on a Redis that cannot run the scripts (here: the
// script commands are renamed away, as a locked-down or incompatible server would
// refuse them), reports an unreachable one as unavailable, and passes on a good one.
func TestRedisStartupCheck(t *testing.T) {
	ctx := context.Background()
	broken := redistest.StartServer(t, "--rename-command", "EVALSHA", "EVALSHA_DISABLED", "--rename-command", "EVAL", "EVAL_DISABLED")
	r := newReplica(t, broken)
	err := r.store.Check(ctx)
	if !errors.Is(err, resilient.ErrPermanent) || errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Check on a Redis without EVAL: %v, want ErrPermanent", err)
	}
	if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(strings.ToLower(log), "unknown command") {
		t.Fatalf("not logged at error level:\n%s", log)
	}
	// Decisions on it are errors too, in Open mode: never a quiet "allowed".
	open := newReplica(t, broken, resilient.WithMode(resilient.Open))
	if res, err := open.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "k"}); !errors.Is(err, resilient.ErrPermanent) || res.Allowed {
		t.Fatalf("a decision on a Redis without EVAL in open mode: %+v %v", res, err)
	}

	good := redistest.StartServer(t)
	g := newReplica(t, good)
	if err := g.store.Check(ctx); err != nil {
		t.Fatalf("Check on a good Redis: %v", err)
	}
	good.Kill()
	bounded, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.store.Check(bounded); !errors.Is(err, core.ErrStoreUnavailable) || errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("Check on a dead Redis: %v, want ErrStoreUnavailable", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("Check waited %v with a ctx of 300ms", waited)
	}
	// The outage is confirmed: a client no answer is known for is decided in Local
	// mode from its first request, not refused as a slow call.
	if got := g.store.Breaker(); got != resilient.BreakerOpen {
		t.Fatalf("breaker %v after Check found Redis dead, want open", got)
	}
	if res, err := g.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "ip:192.0.2.77"}); err != nil || !res.Allowed || res.Remaining != 9 {
		t.Fatalf("a new client's first request: %+v, %v; want admitted by Local mode with 9 left", res, err)
	}
}

// TestRedisStartupCheck's outage on a real 3-master Cluster, one master of which is
// killed before the start: the one that serves the key of Check's first call, so
// Check fails. The store-wide breaker stays closed (its probe reaches another
// master), the failed slot's breaker opens before Check returns, and with it every
// key of the dead master follows Local mode from its first request, while a key of
// a live master is decided by Redis.
func TestRedisStartupCheckOnAClusterWithADeadMaster(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	first := resilient.CheckPolicies()[0]
	shared, err := redisstore.Dial(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	dead := c.MasterOf(resilient.SlotOf(shared.Key(first, resilient.CheckKey)))
	deadKey := clusterKey(t, c, tenPerMinute, dead, "ip:192.0.2.")
	liveKey := clusterKey(t, c, tenPerMinute, (dead+1)%3, "ip:198.51.100.")
	if err := c.Servers[dead].Kill(); err != nil {
		t.Fatal(err)
	}
	store, err := resilient.New(shared, resilient.WithBreaker(3, faultCooldown))
	if err != nil {
		shared.Close()
		t.Fatal(err)
	}
	defer store.Close() // closes shared too
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Check(ctx); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Check with master %d dead: %v, want unavailable", dead, err)
	}
	if got := store.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("one dead master of three opened the store-wide breaker (%v)", got)
	}
	for _, tc := range []struct {
		key string
		via string
	}{{deadKey, "Local mode"}, {liveKey, "Redis"}} {
		res, err := store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: tc.key})
		if err != nil || !res.Allowed || res.Remaining != 9 {
			t.Fatalf("a new client's first request (%s): %+v, %v; want admitted by %s with 9 left", tc.key, res, err, tc.via)
		}
	}
	if !store.Fallback(tenPerMinute.Name()) {
		t.Error("the dead master's key was not decided in the policy's failure mode")
	}
}
