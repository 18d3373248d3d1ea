package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// endedInAnOutage grants, on the shared store, both leases of export on each of keys
// keys, then fails the store and ends their requests: each release fails, and the
// lease book remembers the leases, which the shared store still holds. trip opens
// the breaker first (an outage); without it the breaker stays closed (slow calls,
// under neverOpen). It returns the leases.
func endedInAnOutage(t *testing.T, r *rig, keys int, trip bool) []core.Request {
	t.Helper()
	ctx := context.Background()
	var leases []core.Request
	for k := range keys {
		for lease := uint64(1); lease <= 2; lease++ {
			req := core.Request{Policy: export, Key: fmt.Sprintf("user:%d", k), Lease: lease}
			if res, err := r.store.Decide(ctx, req); err != nil || !res.Allowed {
				t.Fatalf("healthy: lease %d of %s: %+v, %v", lease, req.Key, res, err)
			}
			leases = append(leases, req)
		}
	}
	r.shared.fail(errDown)
	if trip {
		tripBreaker(t, r.store, perMinute5)
	}
	for _, req := range leases {
		if err := r.store.Release(ctx, req, req.Lease); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatalf("releasing lease %d of %s on a failing store: %v; want it unavailable", req.Lease, req.Key, err)
		}
	}
	return leases
}

// A release of an ended lease, made before its key's next decision, is a call to
// the shared store like the decision's: it reaches the observers (the latency and
// error metrics). Made outside Store.call, it was invisible.
func TestReleasesOfEndedLeasesAreReported(t *testing.T) {
	r := newRig(t, neverOpen)
	ctx := context.Background()
	endedInAnOutage(t, r, 1, false)
	r.shared.heal()
	calls, events := r.shared.calls.Load(), r.rec.callCount()
	if res, err := r.store.Decide(ctx, core.Request{Policy: export, Key: "user:0", Lease: 3}); err != nil || !res.Allowed {
		t.Fatalf("leases 1 and 2 ended: lease 3: %+v, %v; want admitted", res, err)
	}
	made := r.shared.calls.Load() - calls
	reported := r.rec.callCount() - events
	if made != 3 || int64(reported) != made {
		t.Errorf("the key's decision made %d calls (2 releases and the decision), %d reported; want 3 and 3", made, reported)
	}
}

// callCount is how many store calls the recorder holds.
func (r *recorder) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}
