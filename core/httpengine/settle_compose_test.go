package httpengine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// refundOn5xx keeps nothing of a request that failed on the server.
func refundOn5xx(_ *http.Request, status int, charged int64) int64 {
	if status >= 500 {
		return 0
	}
	return charged
}

func failing(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }

// left is what a fresh cost-1 probe of policy at peerKey's key leaves; the
// probe itself is counted back.
func left(t *testing.T, store core.Store, policy core.Policy) int64 {
	t.Helper()
	res, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: "ip:192.0.2.1", Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res.Remaining + 1
}

// Each policy of a stack gets back what it was charged, whatever its own cost.
func TestSettleRefundsEachPolicyItsOwnCharge(t *testing.T) {
	store, _ := newStore(t)
	cheap := core.MustPolicy("cheap", core.FixedWindow, core.PerMinute(10))
	dear := core.MustPolicy("dear", core.FixedWindow, core.PerMinute(10), core.WithDefaultCost(4))
	var charges []int64
	l := httpengine.Must(store, httpengine.Stack(httpengine.Limit(cheap, peerKey), httpengine.Limit(dear, peerKey)),
		httpengine.WithSettle(func(r *http.Request, status int, charged int64) int64 {
			charges = append(charges, charged)
			return refundOn5xx(r, status, charged)
		}))
	serve(l, request("192.0.2.1:1"), failing)
	if len(charges) != 2 || charges[0] != 1 || charges[1] != 4 {
		t.Fatalf("the settle function saw charges %v, want [1 4]", charges)
	}
	if c, d := left(t, store, cheap), left(t, store, dear); c != 10 || d != 10 {
		t.Fatalf("after a refunded request: cheap has %d, dear %d, want 10 and 10", c, d)
	}
}

// A route's settle function gives back what the route's policies were charged,
// and nothing of an app-wide policy it does not declare.
func TestNestedSettleRefundsOnlyItsOwnPolicies(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
	outer := httpengine.Must(store, httpengine.Limit(api, peerKey))
	inner := httpengine.Must(store, httpengine.Limit(route, peerKey), httpengine.WithCost(5), httpengine.WithSettle(refundOn5xx))
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		serve(inner, r, failing)
	})
	if a, b := left(t, store, api), left(t, store, route); a != 9 || b != 10 {
		t.Fatalf("after a failed request: api has %d, route %d; want 9 (no settle app-wide) and 10 (refunded 5)", a, b)
	}
}

// An app-wide settle function still settles the app-wide policy of a request a
// route limiter merged into its decision; a policy the route redeclares without a
// settle function of its own is settled by the app-wide one, at the route's cost.
func TestNestedKeepsTheOuterSettle(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
	for _, tc := range []struct {
		name      string
		inner     httpengine.Limits
		options   []httpengine.Option
		api, rout int64
	}{
		{"other policy", httpengine.Limit(route, peerKey), nil, 10, 9},
		{"same policy, higher cost", httpengine.Limit(api, peerKey), []httpengine.Option{httpengine.WithCost(3)}, 10, 10},
	} {
		store, _ := newStore(t)
		outer := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithSettle(refundOn5xx))
		inner := httpengine.Must(store, tc.inner, tc.options...)
		var innerStatusRecorded bool
		serve(outer, request("192.0.2.1:1"), func(w http.ResponseWriter, r *http.Request) {
			tk := inner.Start(r, w.Header())
			innerStatusRecorded = tk.RecordsStatus()
			rec := httptest.NewRecorder()
			failing(rec, tk.Request())
			tk.Finish(rec.Code, true)
		})
		if !innerStatusRecorded {
			t.Errorf("%s: the merged ticket does not ask for the status its settlement needs", tc.name)
		}
		if a, b := left(t, store, api), left(t, store, route); a != tc.api || b != tc.rout {
			t.Errorf("%s: api has %d, route %d; want %d and %d", tc.name, a, b, tc.api, tc.rout)
		}
	}
}

// A Limiter on another store between two layers does not stop the inner one from
// merging with the outer decision of its own store.
func TestNestedMergesAcrossALimiterOnAnotherStore(t *testing.T) {
	store, _ := newStore(t)
	other, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	peer := core.MustPolicy("peer", core.FixedWindow, core.PerMinute(100))
	outer := httpengine.Must(store, httpengine.Limit(api, peerKey))
	middle := httpengine.Must(other, httpengine.Limit(peer, peerKey))
	inner := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(5))
	var got *httptest.ResponseRecorder
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		serve(middle, r, func(_ http.ResponseWriter, r *http.Request) {
			got = serve(inner, r, ok)
		})
	})
	// The fields list the middle Limiter's policy too, before the merged decision's.
	if got.Header().Get("RateLimit") != `"peer";r=99;t=60, "api";r=5;t=60` {
		t.Fatalf("RateLimit %q, want peer and api r=5: api charged once, at the inner cost", got.Header().Get("RateLimit"))
	}
	if a, p := left(t, store, api), left(t, other, peer); a != 5 || p != 99 {
		t.Fatalf("api has %d, peer %d; want 5 and 99", a, p)
	}
}

// A request admitted at the end of a window whose handler fails after another
// request opened the next window: its refund goes back to the window it was
// counted in, never to the newer one, which would then admit one request more than
// its limit.
func TestSettleRefundsTheWindowTheChargeWasCountedIn(t *testing.T) {
	for _, tc := range []struct {
		alg     core.Algorithm
		checkAt int64 // ms after the first window began
	}{
		{core.FixedWindow, 60_010}, // the next window holds the second request alone
		{core.SlidingLog, 120_000}, // the first request's entry is gone, the second's is not
	} {
		t.Run(string(tc.alg), func(t *testing.T) {
			store, clock := newStore(t)
			p := core.MustPolicy("api", tc.alg, core.PerMinute(3))
			l := httpengine.Must(store, httpengine.Limit(p, peerKey), httpengine.WithSettle(refundOn5xx))
			clock.Set(storetest.Start + 59_999)
			serve(l, request("192.0.2.1:1"), func(w http.ResponseWriter, _ *http.Request) {
				clock.Set(storetest.Start + 60_010)
				serve(l, request("192.0.2.1:1"), func(http.ResponseWriter, *http.Request) {})
				w.WriteHeader(http.StatusBadGateway)
			})
			clock.Set(storetest.Start + tc.checkAt)
			if got := left(t, store, p); got != 2 {
				t.Fatalf("after the refund: %d left, want 2 (the second request still counts)", got)
			}
		})
	}
}

// probe is a decision of policy at peerKey's key and cost, charged (a probe that
// admits spends what it asks).
func probe(t *testing.T, store core.Store, policy core.Policy, cost int64) core.Result {
	t.Helper()
	res, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: "ip:192.0.2.1", Cost: cost})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A rule that only a shadow route declares, refused within an admitted merged
// decision, was never charged: a settle function that gives back what a failed
// request was charged gives nothing back of it, and neither does a request that
// ends before its handler.
func TestAnObservedRefusalIsNeverGivenBack(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	trial := core.MustPolicy("trial", core.FixedWindow, core.PerMinute(1))
	store, _ := newStore(t)
	app := httpengine.Must(store, httpengine.Limit(api, peerKey))
	route := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(trial, peerKey)),
		httpengine.WithShadow(), httpengine.WithSettle(refundOn5xx))
	down := httpengine.Must(brokenStore{err: errBackend}, httpengine.Limit(api, peerKey))
	send := func(handler http.HandlerFunc) *httptest.ResponseRecorder {
		var got *httptest.ResponseRecorder
		serve(app, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
			got = serve(route, r, handler)
		})
		return got
	}
	if w := send(ok); w.Code != http.StatusOK {
		t.Fatalf("first: %d", w.Code)
	}
	// trial refuses (observed); the handler fails, and the route's settle
	// function gives back what each policy was charged.
	if w := send(failing); w.Code != http.StatusBadGateway {
		t.Fatalf("second: %d", w.Code)
	}
	if res := probe(t, store, trial, 1); res.Allowed {
		t.Fatalf("after a settled failure: trial admits again within its minute of 1: a refusal it never charged was refunded")
	}
	// A limiter further in cannot decide: the request spends nothing.
	var code int
	send(func(_ http.ResponseWriter, r *http.Request) { code = serve(down, r, ok).Code })
	if code != http.StatusServiceUnavailable {
		t.Fatalf("third: %d, want 503", code)
	}
	if res := probe(t, store, trial, 1); res.Allowed {
		t.Fatalf("after an undecided request: trial admits again within its minute of 1: a refusal it never charged was given back")
	}
}

// The same over three layers on one store: an app-wide limiter, a shadow one
// trying out trial beside the app-wide policy, and a route. The route merges
// with a decision that holds trial's observed refusal: refused by the route's
// gate, it gives back nothing of trial, which it never charged; admitted, trial
// still only observes, and never refuses the request.
func TestAnObservedRefusalStaysObservedUnderAThirdLayer(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	trial := core.MustPolicy("trial", core.FixedWindow, core.PerMinute(1))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(2))
	store, clock := newStore(t)
	probe(t, store, trial, 1) // trial is spent: it refuses, observed
	app := httpengine.Must(store, httpengine.Limit(api, peerKey))
	shadow := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(trial, peerKey)), httpengine.WithShadow())
	route := httpengine.Must(store, httpengine.Limit(gate, peerKey))
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if w, _ := through(clock, request("192.0.2.1:1"), app, shadow, route); w.Code != want {
			t.Fatalf("request %d: %d (RateLimit %q), want %d", i+1, w.Code, w.Header().Get("RateLimit"), want)
		}
	}
	if res := probe(t, store, trial, 1); res.Allowed {
		t.Fatalf("trial admits again within its minute of 1: the route's refusal gave back a refusal trial never charged")
	}
	if res := probe(t, store, api, 1); res.Remaining != 97 {
		t.Fatalf("api after two admitted requests and this probe: %d left, want 97", res.Remaining)
	}
}
