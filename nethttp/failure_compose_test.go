package nethttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// policyDown fails every decision of one policy as unavailable, as a Cluster node
// that holds only that policy's keys would.
type policyDown struct {
	*memory.Store
	policy string
}

func (s policyDown) Decide(ctx context.Context, r core.Request) (core.Result, error) {
	if r.Policy.Name() == s.policy {
		return core.Result{}, fmt.Errorf("%w: its node is down", core.ErrStoreUnavailable)
	}
	return s.Store.Decide(ctx, r)
}

// TestRouteThatFailsSpendsNothingAppWide: a route whose policy fails closed (503)
// used to spend the app-wide policy of a request it never served; like a refusal,
// a failure to decide now gives the app-wide charge back.
func TestRouteThatFailsSpendsNothingAppWide(t *testing.T) {
	clock := storetest.NewClock()
	shared := memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { shared.Close() })
	store, err := resilient.New(policyDown{shared, "route"}, resilient.WithClock(clock.Now),
		resilient.WithMode(resilient.Local), resilient.WithPolicyMode("route", resilient.Closed))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client := func(*http.Request) (string, error) { return "client", nil }
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(100))
	h := appAndRoute(store, api, route, client)
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/z", nil))
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("/z: %d, want 503", w.Code)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/y", nil))
	if got := w.Header().Get("RateLimit"); got != `"api";r=99;t=60` {
		t.Fatalf("the first request served: RateLimit %s, want r=99: three 503s spent the app-wide policy", got)
	}
}

// appAndRoute is an app whose policy api limits every request and whose route
// GET /z also has the policy route; GET /y has api alone.
func appAndRoute(store core.Store, api, route core.Policy, key func(*http.Request) (string, error)) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /z", nethttp.Middleware(store, httplimit.Limit(route, key))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	mux.HandleFunc("GET /y", func(http.ResponseWriter, *http.Request) {})
	return nethttp.Middleware(store, httplimit.Limit(api, key))(mux)
}

// blip fails the next decision as unavailable, once.
type blip struct {
	*memory.Store
	next atomic.Bool
}

func (s *blip) Decide(ctx context.Context, r core.Request) (core.Result, error) {
	if s.next.CompareAndSwap(true, false) {
		return core.Result{}, fmt.Errorf("%w: blip", core.ErrStoreUnavailable)
	}
	return s.Store.Decide(ctx, r)
}

// openOverBlip is a resilient store in Open mode over a memory store that fails
// when told to.
func openOverBlip(t *testing.T) (*blip, *resilient.Store) {
	clock := storetest.NewClock()
	shared := &blip{Store: memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0))}
	t.Cleanup(func() { shared.Close() })
	store, err := resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithMode(resilient.Open))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return shared, store
}

// TestUnenforcedAdmissionIsNeverRefunded: in Open mode a request the store could
// not decide is admitted without being counted. WithSettle (nothing charged for a
// 5xx) used to refund it anyway, and the bucket gained a token nobody spent.
func TestUnenforcedAdmissionIsNeverRefunded(t *testing.T) {
	shared, store := openOverBlip(t)
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(3))
	h := nethttp.Middleware(store, httplimit.Limit(api, func(*http.Request) (string, error) { return "k", nil }),
		httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
			if status >= 500 {
				return 0
			}
			return cost
		}))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Fail") != "" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	send := func(fail bool) int {
		r := httptest.NewRequest("GET", "/", nil)
		if fail {
			r.Header.Set("X-Fail", "1")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	send(false)             // counted: 2 tokens left
	shared.next.Store(true) // the store fails once
	if got := send(true); got != http.StatusInternalServerError {
		t.Fatalf("unenforced request: %d, want the handler's 500", got)
	}
	admitted := 0
	for range 10 {
		if send(false) == http.StatusOK {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("%d admitted, want the 2 tokens left: a refund gave back a token nobody spent", admitted)
	}
}

// TestUnenforcedOuterIsNeverGivenBack: a route's refusal gives back what the
// app-wide limiter charged, but not an app-wide admission in Open mode, which
// charged nothing.
func TestUnenforcedOuterIsNeverGivenBack(t *testing.T) {
	shared, store := openOverBlip(t)
	client := func(*http.Request) (string, error) { return "k", nil }
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(3))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(1))
	h := appAndRoute(store, api, route, client)
	send := func(target string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		return w.Code
	}
	if send("/z") != http.StatusOK { // api: 2 left; route: spent
		t.Fatal("first /z refused")
	}
	shared.next.Store(true) // the app-wide decision of the next request fails: unenforced
	if got := send("/z"); got != http.StatusTooManyRequests {
		t.Fatalf("second /z: %d, want the route's 429", got)
	}
	admitted := 0
	for range 10 {
		if send("/y") == http.StatusOK {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("%d admitted, want the 2 tokens left: the route's refusal gave back an app-wide token nobody spent", admitted)
	}
}
