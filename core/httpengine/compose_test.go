package httpengine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

func nested(outer, inner *httpengine.Limiter, r *http.Request) *httptest.ResponseRecorder {
	var got *httptest.ResponseRecorder
	w := serve(outer, r, func(w http.ResponseWriter, r *http.Request) {
		got = serve(inner, r, ok)
	})
	if got == nil {
		return w
	}
	return got
}

func peerKey(*http.Request) (string, error) { return "ip:192.0.2.1", nil }

// An inner declaration that costs less than the outer one refunds the excess.
func TestNestedLowerInnerCostRefundsTheExcess(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	outer := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(3))
	inner := httpengine.Must(store, httpengine.Limit(api, peerKey))
	if w := nested(outer, inner, request("192.0.2.1:1")); w.Header().Get("RateLimit") != `"api";r=9;t=60` {
		t.Fatalf("RateLimit %q, want r=9: the inner cost 1, not the outer 3", w.Header().Get("RateLimit"))
	}
	res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "ip:192.0.2.1"})
	if err != nil || res.Remaining != 8 {
		t.Fatalf("after one nested request and this one: remaining %d (%v), want 8", res.Remaining, err)
	}
}

// A concurrency slot taken by the outer Limiter is released when the inner one
// refuses, and held until the end of an admitted request otherwise.
func TestNestedRefusalReleasesTheOuterLease(t *testing.T) {
	store, _ := newStore(t)
	slots := core.MustConcurrencyPolicy("slots", 1, time.Minute)
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(1))
	outer := httpengine.Must(store, httpengine.Limit(slots, peerKey))
	inner := httpengine.Must(store, httpengine.Limit(route, peerKey))
	if w := nested(outer, inner, request("192.0.2.1:1")); w.Code != 200 {
		t.Fatalf("first: %d", w.Code)
	}
	if w := nested(outer, inner, request("192.0.2.1:1")); w.Code != http.StatusTooManyRequests ||
		w.Header().Get("RateLimit") != `"slots";r=1, "route";r=0;t=60` {
		t.Fatalf("second: %d %q, want 429 from the route", w.Code, w.Header().Get("RateLimit"))
	}
	// Both requests ended: the slot is free again.
	res, err := store.Decide(context.Background(), core.Request{Policy: slots, Key: "ip:192.0.2.1", Lease: 99})
	if err != nil || !res.Allowed {
		t.Fatalf("the slot was not given back: %+v %v", res, err)
	}
}

// Limiters on different stores decide separately: each charges its own.
func TestNestedOnDifferentStoresDecideSeparately(t *testing.T) {
	first, _ := newStore(t)
	second, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	outer := httpengine.Must(first, httpengine.Limit(api, peerKey))
	inner := httpengine.Must(second, httpengine.Limit(api, peerKey), httpengine.WithCost(5))
	nested(outer, inner, request("192.0.2.1:1"))
	for store, want := range map[core.Store]int64{first: 8, second: 4} {
		res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "ip:192.0.2.1"})
		if err != nil || res.Remaining != want {
			t.Fatalf("remaining %d (%v), want %d", res.Remaining, err, want)
		}
	}
}

// Three levels merge into one decision, charged once at the innermost cost.
func TestThreeLevelsMergeIntoOne(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	other := core.MustPolicy("other", core.FixedWindow, core.PerMinute(10))
	a := httpengine.Must(store, httpengine.Limit(api, peerKey))
	b := httpengine.Must(store, httpengine.Limit(other, peerKey), httpengine.WithCost(2))
	c := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(4))
	var got *httptest.ResponseRecorder
	serve(a, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		serve(b, r, func(_ http.ResponseWriter, r *http.Request) {
			got = serve(c, r, ok)
		})
	})
	if got.Header().Get("RateLimit") != `"api";r=6;t=60, "other";r=8;t=60` ||
		got.Header().Get("RateLimit-Policy") != `"api";q=10;w=60, "other";q=10;w=60` {
		t.Fatalf("RateLimit %q, RateLimit-Policy %q", got.Header().Get("RateLimit"), got.Header().Get("RateLimit-Policy"))
	}
}

// Concurrent nested requests never admit more than one merged decision each
// allows, and leave nothing charged beyond what they were admitted for: every
// outer charge of a refused request is given back.
func TestConcurrentNestedRequestsChargeExactly(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	outer := httpengine.Must(store, httpengine.Limit(api, peerKey))
	inner := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(2))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if w := nested(outer, inner, request("192.0.2.1:1")); w.Code == http.StatusOK {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n > 50 {
		t.Fatalf("admitted %d requests of cost 2 under a limit of 100", n)
	}
	res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "ip:192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	spent := 100 - res.Remaining
	if res.Allowed {
		spent-- // this probe's own
	}
	if spent != 2*admitted.Load() {
		t.Fatalf("%d spent for %d admitted requests of cost 2", spent, admitted.Load())
	}
	t.Logf("%d of 320 admitted", admitted.Load())
}

// A leaky-bucket wait the outer Limiter served is not served again by an inner one
// merged into its decision.
func TestNestedDoesNotWaitTheOuterDelayAgain(t *testing.T) {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(20*time.Millisecond), core.WithBurst(2))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(100))
	for _, shadow := range []bool{false, true} {
		store, _ := newStore(t)
		var options []httpengine.Option
		if shadow {
			options = append(options, httpengine.WithShadow())
		}
		outer := httpengine.Must(store, httpengine.Limit(queue, peerKey), options...)
		inner := httpengine.Must(store, httpengine.Limit(route, peerKey))
		innerDelay := time.Duration(-1)
		handler := func(w http.ResponseWriter, r *http.Request) {
			tk := inner.Start(r, w.Header())
			innerDelay = tk.Delay()
			tk.Finish(http.StatusOK, true)
		}
		serve(outer, request("192.0.2.1:1"), handler) // the head of the queue
		serve(outer, request("192.0.2.1:1"), handler) // a 20ms slot, waited (or not, in shadow mode) outside
		if innerDelay != 0 {
			t.Errorf("shadow %v: the merged decision waits %v more", shadow, innerDelay)
		}
	}
}

// A leaky bucket declared at two levels, cost 1 app-wide and 5 on the route: the
// route's difference queues behind the app-wide charge, which holds the request's
// slot, so its wait counts only what others queued in between. The store's clock
// stands still, so every wait is the store's answer, not the time the test took.
func TestNestedLeakyBucketWaitsForItsSlotOnce(t *testing.T) {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(20*time.Millisecond), core.WithBurst(20))
	routeWait := func(t *testing.T, outer, inner *httpengine.Limiter, between func()) time.Duration {
		t.Helper()
		wait := time.Duration(-1)
		serve(outer, request("192.0.2.1:1"), func(w http.ResponseWriter, r *http.Request) {
			between()
			tk := inner.Start(r, w.Header())
			if tk.Disposition() != httpengine.Admitted {
				t.Fatalf("route: %v, want admitted", tk.Disposition())
			}
			wait = tk.Delay()
			tk.Finish(http.StatusOK, true)
		})
		return wait
	}
	nothing := func() {}
	t.Run("an idle queue waits nothing", func(t *testing.T) {
		store, _ := newStore(t)
		outer := httpengine.Must(store, httpengine.Limit(queue, peerKey))
		inner := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithCost(5))
		if got := routeWait(t, outer, inner, nothing); got != 0 {
			t.Fatalf("the route waits %v, want 0: one decision at cost 5 on an idle queue waits nothing", got)
		}
	})
	t.Run("an app-wide shadow charge is not a wait served", func(t *testing.T) {
		store, _ := newStore(t)
		outer := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithShadow())
		inner := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithCost(5))
		routeWait(t, outer, inner, nothing)
		// The queue holds 5 units (100 ms): one decision at cost 5 waits for them.
		if got := routeWait(t, outer, inner, nothing); got != 100*time.Millisecond {
			t.Fatalf("the second request waits %v, want 100ms, as one decision at cost 5 does", got)
		}
	})
	t.Run("an app-wide shadow slot of the same cost is waited by the route", func(t *testing.T) {
		store, _ := newStore(t)
		outer := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithShadow())
		inner := httpengine.Must(store, httpengine.Limit(queue, peerKey))
		routeWait(t, outer, inner, nothing)
		// The shadow Limiter charged the slot behind the first request's, 20 ms on,
		// and never waits: the route enforcing the same policy waits for it. It
		// took the slot as served, and the bucket no longer made anyone wait.
		if got := routeWait(t, outer, inner, nothing); got != 20*time.Millisecond {
			t.Fatalf("the second request waits %v, want its slot's 20ms", got)
		}
	})
	t.Run("a leaky bucket only a shadow limiter declares makes no one wait", func(t *testing.T) {
		store, _ := newStore(t)
		api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
		both := httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(queue, peerKey))
		outer := httpengine.Must(store, both, httpengine.WithShadow())
		inner := httpengine.Must(store, httpengine.Limit(api, peerKey))
		for i := range 3 {
			if got := routeWait(t, outer, inner, nothing); got != 0 {
				t.Fatalf("request %d waits %v for a slot of %q, which only the shadow limiter declares", i+1, got, queue.Name())
			}
		}
	})
	t.Run("others queued in between are waited for", func(t *testing.T) {
		store, _ := newStore(t)
		outer := httpengine.Must(store, httpengine.Limit(queue, peerKey))
		inner := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithCost(5))
		// Between this request's app-wide charge and its route's, another request
		// queues 5 units (100 ms) behind its slot.
		other := func() { routeWait(t, outer, inner, nothing) }
		if got := routeWait(t, outer, inner, other); got != 100*time.Millisecond {
			t.Fatalf("the route waits %v, want the 100ms the other request queued meanwhile", got)
		}
	})
}

// A Limiter in shadow mode that shares a policy with an enforcing one merges with it:
// the policy in common is charged once, and enforced. The rules only the shadow one
// declares are decided and observed, and never refuse: merged all-or-nothing, a
// shadow route's trial policy of 1 a minute refused the second request.
func TestShadowPolicyMergedWithAnEnforcedOneNeverRefuses(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	trial := core.MustPolicy("trial", core.FixedWindow, core.PerMinute(1))
	enforced := func(store core.Store) *httpengine.Limiter {
		return httpengine.Must(store, httpengine.Limit(api, peerKey))
	}
	observed := func(store core.Store) *httpengine.Limiter {
		return httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(trial, peerKey)), httpengine.WithShadow())
	}
	for _, c := range []struct {
		name         string
		outer, inner func(core.Store) *httpengine.Limiter
	}{
		{"shadow route under an enforcing app", enforced, observed},
		{"enforcing route under a shadow app", observed, enforced},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, _ := newStore(t)
			outer, inner := c.outer(store), c.inner(store)
			for i := 1; i <= 3; i++ {
				var route *httptest.ResponseRecorder
				w := serve(outer, request("192.0.2.1:1"), func(w http.ResponseWriter, r *http.Request) {
					route = serve(inner, r, func(http.ResponseWriter, *http.Request) {})
					w.WriteHeader(route.Code)
				})
				if w.Code != http.StatusOK {
					t.Fatalf("request %d: %d, want 200: only the shadow Limiter declares %q", i, w.Code, trial.Name())
				}
				// "api" is charged once per request; "trial" admitted only the first.
				want := fmt.Sprintf(`"api";r=%d;t=60, "trial";r=0;t=60`, 100-i)
				if got := route.Header().Get("RateLimit"); got != want {
					t.Fatalf("request %d: RateLimit %q, want %q", i, got, want)
				}
			}
		})
	}
}

// A sliding window weighed on a route (cost 2) under the app-wide limit of the same
// policy (cost 1) is decided as the difference beside the app-wide charge. Its
// Retry-After, counted beside a charge that the retry makes anew, was 79 s where one
// decision at cost 2 says 89 s, and the retry after 79 s was refused again.
func TestSlidingWindowRetryAfterOfALayeredWeight(t *testing.T) {
	api := core.MustPolicy("api", core.SlidingWindow, core.PerMinute(3))
	for _, layered := range []bool{false, true} {
		store, clock := newStore(t)
		clock.Advance(1234 * time.Millisecond)
		route := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(2))
		app := httpengine.Must(store, httpengine.Limit(api, peerKey))
		send := func() *httptest.ResponseRecorder {
			if !layered {
				return serve(route, request("192.0.2.1:1"), func(http.ResponseWriter, *http.Request) {})
			}
			var w *httptest.ResponseRecorder
			serve(app, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
				w = serve(route, r, func(http.ResponseWriter, *http.Request) {})
			})
			return w
		}
		if w := send(); w.Code != http.StatusOK {
			t.Fatalf("layered %v: the first request got %d", layered, w.Code)
		}
		w := send()
		seconds, _ := strconv.Atoi(w.Header().Get("Retry-After"))
		if w.Code != http.StatusTooManyRequests || seconds != 89 {
			t.Fatalf("layered %v: %d, Retry-After %q; want 429 after 89 s, as one decision at cost 2", layered, w.Code, w.Header().Get("Retry-After"))
		}
		clock.Advance(time.Duration(seconds) * time.Second)
		if w := send(); w.Code != http.StatusOK {
			t.Fatalf("layered %v: %d after waiting Retry-After %ds", layered, w.Code, seconds)
		}
	}
}
