package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestSlowAdmissionIsNotGrantedAgain on a real redis-server. Redis leaves a key 1 (2
// a minute). Call B is in flight, held by a CLIENT PAUSE; call A finds the in-flight
// bound (WithMaxInFlight(1)) taken, a failure while the breaker stays closed, and is
// admitted from the last answer: the unit. Redis then answers B: it never saw A, so
// it admits B with the same unit, and B's settlement, charging A's admission, finds
// no room: B is refused, its charge standing for A's. Dropping that charge admitted
// both, and let TestRedisSaturatedClientStaysWithinBound (one instance, unbatched)
// admit 45-46 against a bound of 44 in about 1 run in 4 on a 2-core machine.
func TestRedisSlowAdmissionIsNotGrantedAgainByRedis(t *testing.T) {
	srv := redistest.StartServer(t)
	r := newReplica(t, srv, resilient.WithMaxInFlight(1), resilient.WithDeadline(2*time.Second),
		resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	ctl := admin(t, srv)
	ctx := context.Background()
	req := core.Request{Policy: slowRacePolicy, Key: "ip:192.0.2.9"}
	if res, err := r.store.Decide(ctx, req); err != nil || !res.Allowed || res.Remaining != 1 {
		t.Fatalf("healthy: %+v, %v; want admitted with 1 left", res, err)
	}
	// Scripts wait until CLIENT UNPAUSE (5s at most); the test's own commands do not.
	if err := ctl.Do(ctx, "CLIENT", "PAUSE", 5000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	unpaused := false
	unpause := func() {
		if !unpaused {
			unpaused = true
			if err := ctl.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
				t.Error(err)
			}
		}
	}
	defer unpause()
	type decision struct {
		res core.Result
		err error
	}
	inFlight := make(chan decision, 1)
	go func() {
		res, err := r.store.Decide(ctx, req)
		inFlight <- decision{res, err}
	}()
	waitFor(t, "call B held by the pause", func() bool { return info(t, ctl, "clients", "blocked_clients") == 1 })
	a, err := r.store.Decide(ctx, req)
	if err != nil || !a.Allowed {
		t.Fatalf("call A, a slow call on a key whose last answer left 1: %+v, %v; want admitted from that answer", a, err)
	}
	unpause()
	b := <-inFlight
	if b.err != nil {
		t.Fatalf("call B, answered by Redis: %v", b.err)
	}
	if b.res.Allowed {
		t.Errorf("Redis left the key 1 and both calls were admitted: A from the last answer (a slow call), B by Redis, "+
			"whose settlement could not charge A's admission (no room left) and dropped it: %+v", b.res)
	}
	if r.store.Breaker() != resilient.BreakerClosed || r.store.Fallback(req.Policy.Name()) {
		t.Errorf("A was to be a slow call, not Local mode: breaker %v, fallback %v", r.store.Breaker(), r.store.Fallback(req.Policy.Name()))
	}
}
