package httpengine_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// serveRecovering is serve, returning the panic that left it, if any.
func serveRecovering(l *httpengine.Limiter, r *http.Request) (code int, panicked any) {
	return recovering(func() int { return serve(l, r, ok).Code })
}

// nestedRecovering is nested, returning the panic that left it, if any.
func nestedRecovering(outer, inner *httpengine.Limiter, r *http.Request) (code int, panicked any) {
	return recovering(func() int { return nested(outer, inner, r).Code })
}

// recovering returns the status code answer returns, or -1 and the panic that
// left it.
func recovering(answer func() int) (code int, panicked any) {
	code = -1
	defer func() { panicked = recover() }()
	return answer(), nil
}

// A settle function that panics (a bug in the application's code) panics the
// request, but the limiter still releases every lease of the stack, including
// those of policies after the one being settled: the next request is admitted,
// not refused until the leaked lease times out. The panicking policy keeps its
// whole charge, as a request whose handler panicked does.
func TestPanickingSettleLeaksNoLease(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	export := core.MustConcurrencyPolicy("export", 1, time.Minute)
	l := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(export, peerKey)),
		httpengine.WithSettle(func(*http.Request, int, int64) int64 { panic("settle bug") }))
	for i := range 3 {
		code, panicked := serveRecovering(l, request("192.0.2.1:1"))
		if panicked != "settle bug" || code != -1 {
			t.Fatalf("request %d: answered %d, recovered %v; want the settle function's panic (a 429 is a lease never released)", i, code, panicked)
		}
	}
	if got := left(t, store, api); got != 7 {
		t.Fatalf("api has %d left after three requests whose settling panicked, want 7 (each keeps its charge)", got)
	}
}

// panickingOnError is an Observer with a bug: OnError panics.
type panickingOnError struct{}

func (panickingOnError) OnDecision(*httpengine.Event) {}
func (panickingOnError) OnError(*http.Request, error) { panic("observer bug") }

// failingRefunds is a store whose refunds fail.
type failingRefunds struct{ core.Store }

func (failingRefunds) Refund(context.Context, core.Request, time.Time) error {
	return errors.New("refund: connection reset")
}

// An observer that panics on the error of a failed refund panics the request,
// but the leases of the stack's later policies are still released.
func TestPanickingErrorObserverLeaksNoLease(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	export := core.MustConcurrencyPolicy("export", 1, time.Minute)
	l := httpengine.Must(failingRefunds{store}, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(export, peerKey)),
		httpengine.WithSettle(func(*http.Request, int, int64) int64 { return 0 }),
		httpengine.WithObserver(panickingOnError{}))
	for i := range 3 {
		code, panicked := serveRecovering(l, request("192.0.2.1:1"))
		if panicked != "observer bug" || code != -1 {
			t.Fatalf("request %d: answered %d, recovered %v; want the observer's panic (a 429 is a lease never released)", i, code, panicked)
		}
	}
}

// An observer that panics on the error of a refund that failed while an inner
// Limiter merged its decision (the outer one charged more than the inner costs)
// panics the request, but the lease the merged decision took for the inner
// Limiter's concurrency policy is still released: the error is reported once the
// request's leases are given back, never midway through the merge.
func TestPanickingErrorObserverDuringAMergeLeaksNoLease(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	export := core.MustConcurrencyPolicy("export", 1, time.Minute)
	outer := httpengine.Must(failingRefunds{store}, httpengine.Limit(api, peerKey), httpengine.WithCost(2))
	inner := httpengine.Must(failingRefunds{store}, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(export, peerKey)),
		httpengine.WithObserver(panickingOnError{}))
	for i := range 3 {
		code, panicked := nestedRecovering(outer, inner, request("192.0.2.1:1"))
		if panicked != "observer bug" || code != -1 {
			t.Fatalf("request %d: answered %d, recovered %v; want the observer's panic", i, code, panicked)
		}
	}
	if w := serve(inner, request("192.0.2.1:1"), ok); w.Code != http.StatusOK {
		t.Fatalf("the inner Limiter alone answers %d (RateLimit %q), want 200: a merged request leaked its export lease",
			w.Code, w.Header().Get("RateLimit"))
	}
}

// A refund that fails while a middle Limiter merges with the outer decision is
// reported to the middle Limiter's observer, also when an inner Limiter then
// merges the middle decision into its own.
func TestMergeErrorOfAnAbsorbedDecisionIsReported(t *testing.T) {
	store, _ := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	other := core.MustPolicy("other", core.FixedWindow, core.PerMinute(10))
	var seen recorder
	outer := httpengine.Must(failingRefunds{store}, httpengine.Limit(api, peerKey), httpengine.WithCost(3))
	middle := httpengine.Must(failingRefunds{store}, httpengine.Limit(api, peerKey), httpengine.WithObserver(&seen))
	inner := httpengine.Must(failingRefunds{store}, httpengine.Limit(other, peerKey))
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		serve(middle, r, func(_ http.ResponseWriter, r *http.Request) {
			serve(inner, r, ok)
		})
	})
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.errs) != 1 || !errors.Is(seen.errs[0], httpengine.ErrStore) {
		t.Fatalf("the middle observer saw %v, want the failed refund of the outer excess", seen.errs)
	}
}

// A route on another store refuses, so the app-wide decision gives its charge
// back, and the refund fails. An observer that panics on that error panics the
// request, but only once the app-wide decision finishes, with its lease
// released: giving back while the route refused held the request's scope, and a
// panic there left it held, so the app-wide Finish waited for it forever.
func TestPanickingErrorObserverOfARefusalsGiveBackHoldsNothing(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	slots := core.MustConcurrencyPolicy("slots", 1, time.Minute)
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	appStore, _ := newStore(t)
	routeStore, _ := newStore(t)
	probe(t, routeStore, gate, 1) // the route refuses
	app := httpengine.Must(failingRefunds{appStore}, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(slots, peerKey)),
		httpengine.WithObserver(panickingOnError{}))
	route := httpengine.Must(routeStore, httpengine.Limit(gate, peerKey))
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		serve(app, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) { serve(route, r, ok) })
	}()
	select {
	case p := <-done:
		if p != "observer bug" {
			t.Fatalf("recovered %v, want the observer's panic", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request never returned: the app-wide Finish waits for the request's scope, held since the refusal")
	}
	if w := serve(app, request("192.0.2.1:1"), ok); w.Code != http.StatusOK {
		t.Fatalf("the app-wide limiter alone answers %d (RateLimit %q), want 200: the refused request kept its slot",
			w.Code, w.Header().Get("RateLimit"))
	}
}
