package httpengine_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// A policy declared at two levels with different key functions is two buckets,
// and a merged decision that must ask both decides them in turns (a store's stack
// names each policy once). These tests run each path that gets there: a shadow
// limiter whose refusal leaves everything to decide, and a difference refused
// beside an outer charge, decided again at the whole costs.

// userKey keys requests by their X-User header: an account, where peerKey is the
// client's address.
func userKey(r *http.Request) (string, error) { return "user:" + r.Header.Get("X-User"), nil }

// alice is a request from peerKey's address, signed in as alice.
func alice() *http.Request { return request("192.0.2.1:1", "X-User", "alice") }

// probeKey is a decision of policy at key and cost, charged when admitted.
func probeKey(t *testing.T, store core.Store, policy core.Policy, key string, cost int64) core.Result {
	t.Helper()
	res, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: key, Cost: cost})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// withAndWithoutRefunds runs test on a memory store, then on one that hides its
// Refund (plainStore): mem is the memory store, to set up and probe.
func withAndWithoutRefunds(t *testing.T, test func(t *testing.T, mem *memory.Store, store core.Store)) {
	t.Run("refunds", func(t *testing.T) {
		mem, _ := newStore(t)
		test(t, mem, mem)
	})
	t.Run("no refunds", func(t *testing.T) {
		mem, _ := newStore(t)
		test(t, mem, plainStore{mem})
	})
}

// keySpy counts the decisions asked of each key.
type keySpy struct {
	*memory.Store
	mu    sync.Mutex
	asked map[string]int
}

func (s *keySpy) count(reqs ...core.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range reqs {
		s.asked[reqs[i].Key]++
	}
}

func (s *keySpy) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	s.count(req)
	return s.Store.Decide(ctx, req)
}

func (s *keySpy) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	s.count(reqs...)
	return s.Store.DecideStack(ctx, reqs, results)
}

// App-wide "api" per address in shadow mode, refused (the address's bucket is
// spent), and per account on an enforcing route: the account's bucket is charged
// once, whether the store can refund or not.
func TestShadowAndEnforcedKeysOfOnePolicyChargeTheEnforcedOnce(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(5))
	withAndWithoutRefunds(t, func(t *testing.T, mem *memory.Store, store core.Store) {
		probe(t, mem, api, 5)
		app := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithShadow())
		route := httpengine.Must(store, httpengine.Limit(api, userKey))
		if w, waited := through(storetest.NewClock(), alice(), app, route); w.Code != http.StatusOK {
			t.Fatalf("%s, want 200: only the shadow limiter's bucket refused", answer(w, waited))
		}
		if res := probeKey(t, mem, api, "user:alice", 1); res.Remaining != 3 {
			t.Fatalf("alice after one admitted request and this probe: %d left, want 3", res.Remaining)
		}
	})
}

// The same, with a gate beside the account's "api" on the route, which refuses
// in the first turn: the second turn, the account's bucket, is never asked, so a
// store that cannot refund keeps nothing of the refused request there either.
func TestATurnAfterARefusedOneIsNotAsked(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(5))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	withAndWithoutRefunds(t, func(t *testing.T, mem *memory.Store, store core.Store) {
		probe(t, mem, api, 5)
		probeKey(t, mem, gate, "user:alice", 1)
		app := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithShadow())
		route := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, userKey), httpengine.Limit(gate, userKey)))
		w, waited := through(storetest.NewClock(), alice(), app, route)
		if w.Code != http.StatusTooManyRequests || w.Header().Get("RateLimit") != `"api";r=0;t=60, "gate";r=0;t=60` {
			t.Fatalf("%s, want 429 from the gate", answer(w, waited))
		}
		if res := probeKey(t, mem, api, "user:alice", 1); res.Remaining != 4 {
			t.Fatalf("alice after a refused request and this probe: %d left, want 4", res.Remaining)
		}
	})
}

// A shadow app-wide limiter tries out gate at a weight of 5 (refused: 2 are
// left) beside "api" per address; the route enforces gate at 1 and "api" per
// account, which alice has spent. The merged decision asks gate and the
// address's "api" in its first turn, which admits, and the account's "api" in
// the second, which refuses: the first turn is given back. A refund that fails
// keeps its charge, and the observer sees the error, but the answer is still the
// refusal (429), not a failure (503).
func TestATurnRefusedAfterAnAdmittedOneGivesItBack(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(10))
	for _, refunds := range []bool{true, false} {
		t.Run(map[bool]string{true: "refunds", false: "refunds fail"}[refunds], func(t *testing.T) {
			mem, _ := newStore(t)
			var store core.Store = mem
			if !refunds {
				store = failingRefunds{mem}
			}
			probe(t, mem, gate, 8)
			probeKey(t, mem, api, "user:alice", 10)
			var seen recorder
			app := httpengine.Must(store, httpengine.Stack(httpengine.Limit(gate, peerKey), httpengine.Limit(api, peerKey)),
				httpengine.WithCost(5), httpengine.WithShadow())
			route := httpengine.Must(store, httpengine.Stack(httpengine.Limit(gate, peerKey), httpengine.Limit(api, userKey)),
				httpengine.WithObserver(&seen))
			if w, waited := through(storetest.NewClock(), alice(), app, route); w.Code != http.StatusTooManyRequests ||
				w.Header().Get("Retry-After") != "60" {
				t.Fatalf("%s, want 429 from alice's api", answer(w, waited))
			}
			// Given back, gate keeps its 2 and the address's api its 10; kept, they
			// lost the route's 1 and the shadow weight of 5.
			wantGate, wantAPI, wantErrors := int64(1), int64(9), 0
			if !refunds {
				wantGate, wantAPI, wantErrors = 0, 4, 2
			}
			if g, a := probe(t, mem, gate, 1), probe(t, mem, api, 1); g.Remaining != wantGate || a.Remaining != wantAPI {
				t.Fatalf("after the refusal and a probe: gate %d, api %d left; want %d and %d", g.Remaining, a.Remaining, wantGate, wantAPI)
			}
			seen.mu.Lock()
			defer seen.mu.Unlock()
			if len(seen.errs) != wantErrors {
				t.Fatalf("the observer saw %v, want %d failed refunds", seen.errs, wantErrors)
			}
		})
	}
}

// Three layers of one leaky bucket: per address (cost 1), per account (cost 1),
// and per address again on the route (cost 3). Another request fills the
// address's queue between the first one's charges, so its route difference does
// not fit beside its slot: its charges are given back and both buckets decided
// again at their whole costs, in turns. It is admitted at the queue's end, and
// each bucket is charged once.
func TestThreeLayersOfOneQueueAreDecidedAgainInTurns(t *testing.T) {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3))
	store, _ := newStore(t)
	byAddress := httpengine.Must(store, httpengine.Limit(queue, peerKey))
	byAccount := httpengine.Must(store, httpengine.Limit(queue, userKey))
	route := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithCost(3))
	h := make(http.Header)
	first := byAddress.Start(alice(), h)
	second := byAccount.Start(first.Request(), h)
	if first.Disposition() != httpengine.Admitted || second.Disposition() != httpengine.Admitted {
		t.Fatalf("first layers: %v, %v", first.Disposition(), second.Disposition())
	}
	// bob passes the three layers meanwhile, and queues 3 units behind alice's 1.
	if w, _ := through(storetest.NewClock(), request("192.0.2.1:1", "X-User", "bob"), byAddress, byAccount, route); w.Code != http.StatusOK {
		t.Fatalf("bob: %d", w.Code)
	}
	tk := route.Start(second.Request(), h)
	if tk.Disposition() != httpengine.Admitted || tk.Delay() != 3*time.Second {
		t.Fatalf("alice on the route: %v after %v, want admitted after bob's 3s", tk.Disposition(), tk.Delay())
	}
	tk.Finish(http.StatusOK, true)
	second.Finish(http.StatusOK, true)
	first.Finish(http.StatusOK, true)
	if res := probe(t, store, queue, 1); res.Allowed || res.ResetAfter != 6*time.Second {
		t.Fatalf("the address's queue: %+v, want 6s of it queued (3 each), this probe refused", res)
	}
	if res := probeKey(t, store, queue, "user:alice", 1); !res.Allowed || res.Delay != time.Second {
		t.Fatalf("alice's queue: %+v, want 1s of it queued, this probe admitted after it", res)
	}
}

// Three layers of one sliding window, as above, with 2 left at the address: the
// route's difference is refused beside the address's charge, and decided again
// in turns at the whole costs. The address refuses in the first turn, so the
// account's bucket, in the second, is asked no more than by its own layer; the
// request spends nothing, and its Retry-After is that of one decision at cost 3.
func TestThreeLayersOfOneSlidingWindowRefusedInTurnsSpendNothing(t *testing.T) {
	api := core.MustPolicy("api", core.SlidingWindow, core.PerMinute(10))
	mem, clock := newStore(t)
	store := &keySpy{Store: mem, asked: map[string]int{}}
	one, oneClock := newStore(t)
	for _, s := range []core.Store{mem, one} {
		probe(t, s, api, 8)
	}
	clock.Advance(30 * time.Second)
	oneClock.Advance(30 * time.Second)
	want := answer(through(oneClock, alice(), httpengine.Must(one, httpengine.Limit(api, peerKey), httpengine.WithCost(3))))
	got := answer(through(clock, alice(), httpengine.Must(store, httpengine.Limit(api, peerKey)),
		httpengine.Must(store, httpengine.Limit(api, userKey)), httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(3))))
	if got != want {
		t.Fatalf("layered:\n %s\none decision:\n %s", got, want)
	}
	if n := store.asked["user:alice"]; n != 1 {
		t.Fatalf("alice's bucket was asked %d times, want once: the turn after the refused one was decided", n)
	}
	if a, b := probe(t, mem, api, 1), probeKey(t, mem, api, "user:alice", 1); a.Remaining != 1 || b.Remaining != 9 {
		t.Fatalf("after the refusal and a probe: the address %d left, alice %d; want 1 and 9", a.Remaining, b.Remaining)
	}
}

// A concurrency policy app-wide per address in shadow mode, whose one slot
// someone else holds (refused, observed), and per account on an enforcing route:
// alice's slot is held while the handler runs and released after it, and the
// address's lease is left alone.
func TestAConcurrencyPolicyUnderTwoKeysHoldsTheEnforcedSlot(t *testing.T) {
	slots := core.MustConcurrencyPolicy("slots", 1, time.Minute)
	withAndWithoutRefunds(t, func(t *testing.T, mem *memory.Store, store core.Store) {
		ctx := context.Background()
		if res, err := mem.Decide(ctx, core.Request{Policy: slots, Key: "ip:192.0.2.1", Lease: 1}); err != nil || !res.Allowed {
			t.Fatalf("the address's slot: %+v %v", res, err)
		}
		app := httpengine.Must(store, httpengine.Limit(slots, peerKey), httpengine.WithShadow())
		route := httpengine.Must(store, httpengine.Limit(slots, userKey))
		var inside int
		serve(app, alice(), func(_ http.ResponseWriter, r *http.Request) {
			if w := serve(route, r, func(_ http.ResponseWriter, _ *http.Request) { inside = serve(route, alice(), ok).Code }); w.Code != http.StatusOK {
				t.Errorf("alice on the route: %d", w.Code)
			}
		})
		if inside != http.StatusTooManyRequests {
			t.Fatalf("another request of alice's while the first ran: %d, want 429 (her one slot held)", inside)
		}
		if w := serve(route, alice(), ok); w.Code != http.StatusOK {
			t.Fatalf("alice's next request: %d, want 200 (her slot released)", w.Code)
		}
		if res, _ := mem.Decide(ctx, core.Request{Policy: slots, Key: "ip:192.0.2.1", Lease: 2}); res.Allowed {
			t.Fatal("the address's slot is free: the shadow limiter released a lease it never held")
		}
	})
}
