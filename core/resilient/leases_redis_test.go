package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// The concurrency limit through two partitions from Redis, on a redis-server and
// a 3-master Cluster: Local mode's second outage counts the lease handed over to
// Redis at the return (TestSecondOutageCountsTheLeasesHandedOver), and Redis's
// leases whose requests ended while it could not be reached are released there
// once it is back, before any decision of their key
// (TestSharedLeaseEndedInAnOutageIsReleasedOnReturn).
func TestRedisLeasesThroughTwoPartitions(t *testing.T) {
	onRedisDeployments(t, func(t *testing.T, client redis.UniversalClient) {
		clock := storetest.NewClock()
		shared := newPartition(t, client, clock, "leases:")
		r := newRigOver(t, clock, shared)
		ctx := context.Background()
		export := core.MustConcurrencyPolicy("export", 2, time.Minute)
		lease := func(key string, id uint64) core.Request { return core.Request{Policy: export, Key: key, Lease: id} }
		decide := func(req core.Request, want bool, when string) {
			t.Helper()
			res, err := r.store.Decide(ctx, req)
			if err != nil || res.Allowed != want || res.Unenforced {
				t.Fatalf("%s: lease %d of %s: %+v, %v; want allowed %v", when, req.Lease, req.Key, res, err, want)
			}
		}
		cut := func() {
			t.Helper()
			shared.down.Store(true)
			tripFor(t, r.store, lease("a", 0))
			tripFor(t, r.store, lease("b", 0))
		}
		heal := func() {
			t.Helper()
			shared.down.Store(false)
			r.awaitRecovery(t, func() bool {
				return r.store.BreakerFor(lease("a", 0)) == resilient.BreakerClosed &&
					r.store.BreakerFor(lease("b", 0)) == resilient.BreakerClosed && !r.store.Fallback("export")
			})
		}

		decide(lease("a", 1), true, "healthy")  // runs throughout
		decide(lease("b", 11), true, "healthy") // both end in the first partition
		decide(lease("b", 12), true, "healthy")
		cut()
		decide(lease("a", 2), true, "first partition, beside lease 1")
		decide(lease("a", 3), false, "first partition, leases 1 and 2 in flight")
		for _, id := range []uint64{11, 12} {
			if err := r.store.Release(ctx, lease("b", id), id); !errors.Is(err, core.ErrStoreUnavailable) {
				t.Fatalf("first partition: releasing lease %d: %v; want it unavailable", id, err)
			}
		}
		heal()
		// Another replica, on Redis directly: b's slots are free.
		for id := uint64(100); id <= 101; id++ {
			if res, err := shared.Store.Decide(ctx, lease("b", id)); err != nil || !res.Allowed {
				t.Fatalf("back: another replica's lease %d of b: %+v, %v; want admitted", id, res, err)
			}
			if err := shared.Store.Release(ctx, lease("b", id), id); err != nil {
				t.Fatal(err)
			}
		}
		decide(lease("a", 4), false, "back, lease 2 handed over, leases 1 and 2 in flight")
		cut()
		r.clock.Advance(2 * time.Second) // past the refusal's Retry-After
		decide(lease("a", 5), false, "second partition, leases 1 and 2 in flight")
	})
}
