package httpengine_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// A rule that an app-wide Limiter charges at cost 1 and a route redeclares at a
// higher cost is charged twice: the outer cost at the outer decision's instant,
// the difference at the route's. A give-back names each part's own instant (a
// window gets back only what it counted, a bucket only what it has not refilled
// since each part), newest part first. Named at the route's instant alone, the
// outer part went back to the route's window, or to a bucket that had refilled it.

// addr is the key every request of these tests has.
const addr = "ip:192.0.2.1"

func addrKey(*http.Request) (string, error) { return addr, nil }

// admitsNow counts the cost-1 requests of policy at addr the store admits now.
func admitsNow(t *testing.T, store core.Store, policy core.Policy) int {
	t.Helper()
	n := 0
	for range 100 {
		res, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: addr, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed {
			break
		}
		n++
	}
	return n
}

// layered is a store, its clock, and a request's path through an app-wide
// Limiter (policy at cost 1, deciding at first ms) and a route's (policy at cost
// 3, at second ms) whose settle function keeps keep and whose handler fails. The
// request's serve counts what the store admits of others while the handler runs
// and after the settle.
type layered struct {
	store *memory.Store
	clock *storetest.Clock
	serve func() (during, after int)
}

func newLayered(t *testing.T, policy core.Policy, first, second, keep int64) layered {
	store, clock := newStore(t)
	outer := httpengine.Must(store, httpengine.Limit(policy, addrKey))
	inner := httpengine.Must(store, httpengine.Limit(policy, addrKey), httpengine.WithCost(3),
		httpengine.WithSettle(func(*http.Request, int, int64) int64 { return keep }))
	return layered{store: store, clock: clock, serve: func() (during, after int) {
		clock.Set(first)
		serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
			clock.Set(second)
			serve(inner, r, func(w http.ResponseWriter, _ *http.Request) {
				during = admitsNow(t, store, policy)
				w.WriteHeader(http.StatusBadGateway)
			})
		})
		return during, admitsNow(t, store, policy)
	}}
}

// settledAcrossWindows is a layered request of a 10/s fixed window whose route
// decides a millisecond after the app-wide Limiter, in the next window.
func settledAcrossWindows(t *testing.T, keep int64) (during, after int) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerSecond(10))
	return newLayered(t, api, 10_999, 11_000, keep).serve()
}

func TestSettleOfAMergedDifferenceGivesEachWindowItsOwnPart(t *testing.T) {
	// The window of 11 s counted the difference, 2: others get 8 meanwhile. The
	// settle keeps nothing: 2 come back to it; the outer 1 is named for the window
	// of 10 s, which has closed and takes nothing back.
	if during, after := settledAcrossWindows(t, 0); during != 8 || after != 2 {
		t.Errorf("the window of 11 s admitted %d others during the request and %d after its refund, want 8 and 2", during, after)
	}
	// Keeping 1 of 3 gives back 2, the newest part: the difference, all of it.
	if during, after := settledAcrossWindows(t, 1); during != 8 || after != 2 {
		t.Errorf("keeping 1: the window of 11 s admitted %d others during the request and %d after, want 8 and 2", during, after)
	}
	// Keeping 2 gives back 1, of the difference.
	if during, after := settledAcrossWindows(t, 2); during != 8 || after != 1 {
		t.Errorf("keeping 2: the window of 11 s admitted %d others during the request and %d after, want 8 and 1", during, after)
	}
}

// The outer charge (1, at 0 s) has been refilled and spent by others when the
// route charges its difference (2, at 1 s): refunded, only the difference comes
// back, so the bucket admits what it would have without the request.
func TestSettleOfAMergedDifferenceGivesBackNoRefilledCharge(t *testing.T) {
	store, clock := newStore(t)
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10)) // burst 10, a token per 100 ms
	outer := httpengine.Must(store, httpengine.Limit(api, addrKey))
	inner := httpengine.Must(store, httpengine.Limit(api, addrKey), httpengine.WithCost(3),
		httpengine.WithSettle(refundOn5xx))
	clock.Set(0)
	others := 0
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		clock.Set(100) // full again
		others += admitsNow(t, store, api)
		clock.Set(1_000) // 9 refilled
		serve(inner, r, failing)
	})
	others += admitsNow(t, store, api)
	if others != 19 {
		t.Errorf("a bucket of 10, refilling 10/s, admitted %d others by 1 s around a refunded request, want 19 (10 + 9)", others)
	}
}

// The outer charge (1, at 1.0 s) and the difference (2, at 1.5 s) are two log
// entries: refunded, each comes out of its own, not 3 out of the one at 1.5 s,
// which others share. A second later the window holds the others alone.
func TestSettleOfAMergedDifferenceTakesEachLogEntryItsOwnPart(t *testing.T) {
	api := core.MustPolicy("api", core.SlidingLog, core.PerSecond(10))
	l := newLayered(t, api, 1_000, 1_500, 0)
	during, after := l.serve() // 7 beside the request's 3, then its 3 given back
	l.clock.Set(2_000)         // the entry at 1.0 s has aged out; those at 1.5 s count
	if late := admitsNow(t, l.store, api); during+after != 10 || late != 0 {
		t.Errorf("the log admitted %d others at 1.5 s and %d at 2 s, want 10 and 0", during+after, late)
	}
}

// Three layers: app-wide api at cost 1 (10.999 s), a group's at cost 3 (its
// difference, 2, at 11.000 s), then a route's gate refuses: what the group holds
// goes back part by part, and the window of 11 s gets back only its 2.
func TestThirdLayerRefusalGivesEachWindowItsOwnPart(t *testing.T) {
	store, clock := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerSecond(10))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	outer := httpengine.Must(store, httpengine.Limit(api, addrKey))
	group := httpengine.Must(store, httpengine.Limit(api, addrKey), httpengine.WithCost(3))
	route := httpengine.Must(store, httpengine.Limit(gate, addrKey))
	if _, err := store.Decide(context.Background(), core.Request{Policy: gate, Key: addr, Cost: 1}); err != nil {
		t.Fatal(err) // gate is spent: the route refuses
	}
	clock.Set(10_999)
	during, code := 0, 0
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		clock.Set(11_000)
		serve(group, r, func(_ http.ResponseWriter, r *http.Request) {
			during = admitsNow(t, store, api)
			code = serve(route, r, ok).Code
		})
	})
	if code != http.StatusTooManyRequests {
		t.Fatalf("the route answered %d, want 429", code)
	}
	if after := admitsNow(t, store, api); during != 8 || after != 2 {
		t.Errorf("the window of 11 s admitted %d others during the request and %d after its refusal, want 8 and 2", during, after)
	}
}

// Three layers, the innermost cheaper: app-wide api at cost 1 (10.999 s), a
// group's at cost 3 (difference 2 at 11.000 s), a route's at cost 2. The excess,
// 1, goes back from the newest part, and the route's settle then gives back what
// is left of each part to its own window.
func TestExcessOfAMergedDifferenceComesFromTheNewestPart(t *testing.T) {
	store, clock := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerSecond(10))
	outer := httpengine.Must(store, httpengine.Limit(api, addrKey))
	group := httpengine.Must(store, httpengine.Limit(api, addrKey), httpengine.WithCost(3))
	route := httpengine.Must(store, httpengine.Limit(api, addrKey), httpengine.WithCost(2),
		httpengine.WithSettle(refundOn5xx))
	clock.Set(10_999)
	during := 0
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		clock.Set(11_000)
		serve(group, r, func(_ http.ResponseWriter, r *http.Request) {
			serve(route, r, func(w http.ResponseWriter, _ *http.Request) {
				during = admitsNow(t, store, api) // the window of 11 s holds 1 of the request
				w.WriteHeader(http.StatusBadGateway)
			})
		})
	})
	if after := admitsNow(t, store, api); during != 9 || after != 1 {
		t.Errorf("the window of 11 s admitted %d others during the request and %d after its refund, want 9 and 1", during, after)
	}
}

// settledBucket serves a request of cost 3 of a bucket (burst 10, a unit per
// 100 ms) at 0 ms, by a route's Limiter alone or under an app-wide one at cost 1
// in the same millisecond; its handler runs 100 ms and fails, and the settle keeps
// nothing. It returns what the bucket admits of others after.
func settledBucket(t *testing.T, alg core.Algorithm, layered bool) int {
	store, clock := newStore(t)
	api := core.MustPolicy("api", alg, core.PerSecond(10))
	route := httpengine.Must(store, httpengine.Limit(api, addrKey), httpengine.WithCost(3),
		httpengine.WithSettle(refundOn5xx))
	handler := func(w http.ResponseWriter, _ *http.Request) {
		clock.Set(100) // a unit refilled meanwhile
		w.WriteHeader(http.StatusBadGateway)
	}
	clock.Set(0)
	if !layered {
		serve(route, request("192.0.2.1:1"), handler)
		return admitsNow(t, store, api)
	}
	outer := httpengine.Must(store, httpengine.Limit(api, addrKey))
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		serve(route, r, handler)
	})
	return admitsNow(t, store, api)
}

// A bucket's parts come back in one refund, which counts the refill since them
// once: as one decision of 3 gets back 3 less the unit refilled, so do the
// app-wide 1 and the route's difference 2. Refunded part by part, each took off
// that unit again (2−1 and 1−1), and the bucket admitted 9, not 10.
func TestSettleOfAMergedDifferenceCountsABucketsRefillOnce(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA} {
		alone, layered := settledBucket(t, alg, false), settledBucket(t, alg, true)
		if alone != 10 || layered != 10 {
			t.Errorf("%v: after a refunded request of cost 3 the bucket admits %d (one Limiter) and %d (app-wide 1, route 3), want 10 and 10", alg, alone, layered)
		}
	}
}

// A leaky bucket's difference queues behind the app-wide slot, and its wait counts
// only what came between (the route's Delay is shortened by the app-wide cost's
// span), but its own slot still begins where the store queued it: a refund names
// that slot. The app-wide Limiter charges 1 at 0 ms (slot 0–100 ms), the route 5 at
// 50 ms (difference 4, slot 100–500 ms, no wait left); the handler fails at 60 ms
// and the settle keeps nothing. At 100 ms the queue is then as if the request had
// never come: 11 slots within the 1 s it may wait. Dated from the shortened wait
// (50 ms), the refund lost 10 ms of drain and left room for 10.
func TestMergedLeakyDifferenceIsRefundedFromItsSlot(t *testing.T) {
	store, clock := newStore(t)
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(10), core.WithBurst(10))
	outer := httpengine.Must(store, httpengine.Limit(queue, addrKey))
	inner := httpengine.Must(store, httpengine.Limit(queue, addrKey), httpengine.WithCost(5),
		httpengine.WithSettle(func(*http.Request, int, int64) int64 { return 0 }))
	clock.Set(1_000_000)
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		clock.Set(1_000_050)
		serve(inner, r, func(w http.ResponseWriter, _ *http.Request) {
			clock.Set(1_000_060)
			w.WriteHeader(http.StatusBadGateway)
		})
	})
	clock.Set(1_000_100)
	if got := admitsNow(t, store, queue); got != 11 {
		t.Errorf("the queue took %d requests at 100 ms after the refund, want 11 (as if the request never came)", got)
	}
}
