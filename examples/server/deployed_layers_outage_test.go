package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestLayeredLimitsThroughAnOutage: the layered app of TestLayeredLimitsOverResilientRedis
// on resilient over a standalone redis-server that is killed, then restarted empty.
// One decision per request must hold in Local mode too, and across the return:
//
//   - a client new to the outage gets the same answers as on Redis: a route's refusal
//     spends nothing of the app-wide "api" limit (the outer charge is given back to
//     the local allowance), and a report costs 5, not 6;
//   - a client Redis had answered for continues from that answer, and its refused
//     report is given back too;
//   - back on Redis (empty), each client gets what Local mode left it, no more (no
//     fresh bucket) and no less (the refunds were not charged to Redis).
//
// The stores run on one virtual clock that moves only while the breaker recovers, by
// less than the api bucket's refill of one token (6 s).
func TestLayeredLimitsThroughAnOutage(t *testing.T) {
	for _, router := range allRouters {
		t.Run(router, func(t *testing.T) {
			redis := redistest.StartServer(t)
			store, clock := resilientOnVirtualClock(t, []string{redis.Addr}, "outage:"+router+":")
			h := layeredApp(t, router, store, newLayeredPolicies(t))
			api := func(what, path, peer string, wantStatus int) int64 {
				t.Helper()
				r := serveLocal(h, http.MethodGet, path, peer)
				if r.status != wantStatus {
					t.Fatalf("%s: GET %s = %d %s, want %d", what, path, r.status, r.body, wantStatus)
				}
				return remainingOf(r.header.Get("RateLimit"), "api")
			}

			const known, fresh = "192.0.2.20:1000", "192.0.2.30:1000"
			if left := api("known client, Redis up", "/resource", known, http.StatusOK); left != 9 {
				t.Fatalf("known client on Redis: api remaining %d, want 9", left)
			}
			if err := redis.Kill(); err != nil {
				t.Fatal(err)
			}
			for i := 0; !store.Fallback("api"); i++ {
				if i == 20 {
					t.Fatalf("the breaker did not open after %d requests to a dead Redis", i)
				}
				serveLocal(h, http.MethodGet, "/resource", fmt.Sprintf("198.51.100.%d:1000", i+1))
			}

			checkLayered(t, h, fresh)
			if left := api("known client: a report (cost 5) in Local mode", "/report", known, http.StatusOK); left != 4 {
				t.Fatalf("known client, report in Local mode: api remaining %d, want 4 (9 from Redis's last answer, less 5)", left)
			}
			api("known client: a second report needs 5 of the 4 left", "/report", known, http.StatusTooManyRequests)

			if err := redis.Restart(); err != nil {
				t.Fatal(err)
			}
			waitWithClock(t, clock, 3*time.Second, "the breaker to close after Redis's restart", func() bool {
				return store.Breaker() == resilient.BreakerClosed && !store.Fallback("api")
			})
			api("the fresh client, back on Redis: Local mode left it nothing", "/resource", fresh, http.StatusTooManyRequests)
			admitted := 0
			for i := 0; i < 6; i++ {
				if r := serveLocal(h, http.MethodGet, "/resource", known); r.status == http.StatusOK {
					admitted++
				}
			}
			if admitted != 4 {
				t.Fatalf("the known client, back on Redis (restarted empty): %d admitted, want the 4 Local mode left it", admitted)
			}
		})
	}
}

// resilientOnVirtualClock is resilient.New in Local mode over redisstore.Dial(addrs),
// both on one virtual clock, which it returns; the store closes with t.
func resilientOnVirtualClock(t *testing.T, addrs []string, prefix string) (*resilient.Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock()
	shared, err := redisstore.Dial(addrs, redisstore.WithClock(clock.Now), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	store, err := resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithMode(resilient.Local))
	if err != nil {
		shared.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store, clock
}

// waitWithClock waits until cond holds, moving clock with the wall every 50 ms (the
// breaker's probes are scheduled on the store's clock), for at most limit.
func waitWithClock(t *testing.T, clock *storetest.Clock, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for waited := time.Duration(0); !cond(); waited += 50 * time.Millisecond {
		if waited >= limit {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
		clock.Advance(50 * time.Millisecond)
	}
}
