package httpengine_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

func remaining(t *testing.T, w interface{ Header() http.Header }) string {
	t.Helper()
	return w.Header().Get("RateLimit")
}

func TestConstantCostSharesTheBucket(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	cheap := httpengine.Must(store, httpengine.Limit(api, headerKey))
	dear := httpengine.Must(store, httpengine.Limit(api, headerKey), httpengine.WithCost(5))
	r := func() *http.Request { return request("192.0.2.1:1", "X-Key", "a") }
	if w := serve(dear, r(), ok); remaining(t, w) != `"api";r=5;t=60` {
		t.Fatalf("after cost 5: %q", remaining(t, w))
	}
	if w := serve(cheap, r(), ok); remaining(t, w) != `"api";r=4;t=60` {
		t.Fatalf("after cost 1: %q", remaining(t, w))
	}
	if w := serve(dear, r(), ok); w.Code != http.StatusTooManyRequests || remaining(t, w) != `"api";r=4;t=60` {
		t.Fatalf("cost 5 with 4 left: %d %q, want 429 and nothing spent", w.Code, remaining(t, w))
	}
	for range 4 {
		if w := serve(cheap, r(), ok); w.Code != 200 {
			t.Fatalf("cost 1 with quota left: %d", w.Code)
		}
	}
}

func TestCostFunc(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	l := httpengine.Must(store, httpengine.Limit(api, headerKey), httpengine.WithCostFunc(func(r *http.Request) (int64, error) {
		return strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
	}))
	get := func(n string) *http.Request {
		r := request("192.0.2.1:1", "X-Key", "a")
		r.URL.RawQuery = "n=" + n
		return r
	}
	if w := serve(l, get("7"), ok); w.Code != 200 || remaining(t, w) != `"api";r=3;t=60` {
		t.Fatalf("cost 7: %d %q", w.Code, remaining(t, w))
	}
	for _, n := range []string{"0", "x"} {
		if w := serve(l, get(n), ok); w.Code != http.StatusInternalServerError {
			t.Errorf("cost %q: %d, want 500 (a cost function error is a programming error)", n, w.Code)
		}
	}
	// A cost from the request above the policy's capacity is the client's: 400, and
	// nothing charged.
	if w := serve(l, get("11"), ok); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"status":400`) {
		t.Errorf("cost 11 of a policy of 10: %d %s, want 400 with a problem body", w.Code, w.Body)
	}
	if w := serve(l, get("3"), ok); w.Code != 200 || remaining(t, w) != `"api";r=0;t=60` {
		t.Fatalf("cost 3 after the refused cost 11: %d %q, want 200 and 0 left (11 charged nothing)", w.Code, remaining(t, w))
	}
}

func TestSettleRefundsAfterTheHandler(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	var charged []int64
	l := httpengine.Must(store, httpengine.Limit(api, headerKey), httpengine.WithCost(4),
		httpengine.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
			charged = append(charged, cost)
			if status >= 500 {
				return 0 // the work was not done
			}
			return cost
		}))
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
	}
	r := func() *http.Request { return request("192.0.2.1:1", "X-Key", "a") }
	serve(l, r(), status(503)) // charged 4, refunded 4
	serve(l, r(), status(200)) // charged 4, kept
	if w := serve(l, r(), status(503)); remaining(t, w) != `"api";r=2;t=60` {
		t.Fatalf("third request sees %q, want r=2 (4 of the first refunded)", remaining(t, w))
	}
	if w := serve(l, r(), status(200)); w.Code != 200 || remaining(t, w) != `"api";r=2;t=60` {
		t.Fatalf("fourth request: %d %q, want 200 r=2: the third was refunded", w.Code, remaining(t, w))
	}
	if len(charged) != 4 || charged[0] != 4 {
		t.Errorf("settle saw charges %v", charged)
	}

	// A panicking handler is not settled: it keeps its cost.
	func() {
		defer func() { _ = recover() }()
		serve(l, r(), func(http.ResponseWriter, *http.Request) { panic("boom") })
	}()
	if len(charged) != 4 {
		t.Errorf("a panicking request was settled")
	}
}

func TestStoreErrorAnswers503WithoutLeaking(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	obs := &recorder{}
	l := httpengine.Must(brokenStore{errBackend}, httpengine.Limit(api, headerKey), httpengine.WithObserver(obs))
	w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d Retry-After %q, want 503 and 1", w.Code, w.Header().Get("Retry-After"))
	}
	want := `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"The rate limiter cannot decide right now; retry in 1 second.","retry_after":1}`
	if got := w.Body.String(); got != want {
		t.Errorf("body %s", got)
	}
	if w.Header().Get("RateLimit") != "" {
		t.Errorf("fields on an undecided request")
	}
	if len(obs.errs) != 1 || !errors.Is(obs.errs[0], httpengine.ErrStore) || !errors.Is(obs.errs[0], errBackend) {
		t.Errorf("observer saw %v", obs.errs)
	}
}

// A route that prices a request above its policy answers 400 under an app-wide
// limiter too, and, the client's fault as an unparseable form is, keeps the
// app-wide charge: oversized batches are not free to send.
func TestCostTooHighUnderAnAppWideLimitKeepsItsCharge(t *testing.T) {
	store, _ := newStore(t)
	app := core.MustPolicy("app", core.FixedWindow, core.PerMinute(10))
	batch := core.MustPolicy("batch", core.FixedWindow, core.PerMinute(5))
	outer := httpengine.Must(store, httpengine.Limit(app, peerKey))
	inner := httpengine.Must(store, httpengine.Limit(batch, peerKey),
		httpengine.WithCostFunc(func(*http.Request) (int64, error) { return 6, nil }))
	if w := nested(outer, inner, request("192.0.2.1:1")); w.Code != http.StatusBadRequest {
		t.Fatalf("a batch priced 6 under a route policy of 5: %d, want 400", w.Code)
	}
	res, err := store.Decide(context.Background(), core.Request{Policy: app, Key: "ip:192.0.2.1"})
	if err != nil || res.Remaining != 8 {
		t.Fatalf("app-wide remaining after the oversized batch and this probe: %d (%v), want 8", res.Remaining, err)
	}
}
