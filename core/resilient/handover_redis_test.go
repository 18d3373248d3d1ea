package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// On a real redis-server, hung or dead and back: the two leases Local mode granted on
// a concurrency key (limit 2), still in flight when Redis returns, fill the key on
// Redis at its first decision there. Redis, which never saw them, does not admit two
// more, and their releases free their slots on Redis.
func TestRedisLocalLeasesInFlightCountOnReturn(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			r := newReplica(t, srv)
			ctx := context.Background()
			export := core.MustConcurrencyPolicy("export", 2, time.Minute)
			lease := func(id uint64) core.Request { return core.Request{Policy: export, Key: "ip:203.0.113.7", Lease: id} }
			decide := func(id uint64, want bool, when string) {
				t.Helper()
				res, err := r.store.Decide(ctx, lease(id))
				if err != nil || res.Allowed != want || res.Unenforced {
					t.Fatalf("%s: lease %d: %+v, %v; want allowed %v", when, id, res, err, want)
				}
			}
			if err := f.inject(srv); err != nil {
				t.Fatal(err)
			}
			openBreaker(t, r.store)
			decide(1, true, "local mode")
			decide(2, true, "local mode")
			decide(3, false, "local mode, both slots in flight")
			if err := f.recover(srv); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(5 * time.Second); r.store.Breaker() != resilient.BreakerClosed || r.store.Fallback("export"); {
				if time.Now().After(deadline) {
					t.Fatalf("not back within 5s: breaker %v", r.store.Breaker())
				}
				r.store.Decide(ctx, core.Request{Policy: throwaway, Key: "ip:192.0.2.200"})
				time.Sleep(20 * time.Millisecond)
			}
			decide(4, false, "back on Redis, leases 1 and 2 in flight")
			if err := r.store.Release(ctx, lease(1), 1); err != nil {
				t.Fatal(err)
			}
			decide(5, true, "lease 1 ended")
			decide(6, false, "leases 2 and 5 in flight")
			for _, id := range []uint64{2, 5} {
				if err := r.store.Release(ctx, lease(id), id); err != nil {
					t.Fatal(err)
				}
			}
			decide(7, true, "every lease ended")
			decide(8, true, "every lease ended")
		})
	}
}
