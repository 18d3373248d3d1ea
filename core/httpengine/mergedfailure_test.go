package httpengine_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// refundsFailingAfter is a store whose refunds succeed ok times, then fail.
type refundsFailingAfter struct {
	core.Store
	ok atomic.Int64
}

func (s *refundsFailingAfter) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if s.ok.Add(-1) < 0 {
		return errors.New("refund: connection reset")
	}
	return s.Store.(core.Refunder).Refund(ctx, req, chargedAt)
}

// storeErrors counts the store errors an Observer hears.
type storeErrors struct{ n atomic.Int64 }

func (*storeErrors) OnDecision(*httpengine.Event) {}
func (o *storeErrors) OnError(_ *http.Request, err error) {
	if errors.Is(err, httpengine.ErrStore) {
		o.n.Add(1)
	}
}

// A merged rule's parts go back newest first, one refund each; when the store
// fails midway, the parts given back stay given back, the failure is reported, and
// the part not given back stays charged: less admitted, never more. Both Limiters'
// observers hear the failure (the outer one heard nothing before). A sliding log
// charged 1 at 1.0 s (app-wide) and 2 at 1.5 s (the route's difference); the first
// refund, the difference, lands, the second fails.
func TestMergedPartsRefundFailingMidwayKeepsTheOlderPart(t *testing.T) {
	store, clock := newStore(t)
	failing := &refundsFailingAfter{Store: store}
	failing.ok.Store(1)
	api := core.MustPolicy("api", core.SlidingLog, core.PerSecond(10))
	heard, outerHeard := &storeErrors{}, &storeErrors{}
	outer := httpengine.Must(failing, httpengine.Limit(api, addrKey), httpengine.WithObserver(outerHeard))
	inner := httpengine.Must(failing, httpengine.Limit(api, addrKey), httpengine.WithCost(3),
		httpengine.WithSettle(func(*http.Request, int, int64) int64 { return 0 }), httpengine.WithObserver(heard))
	clock.Set(1_000)
	during := 0
	serve(outer, request("192.0.2.1:1"), func(_ http.ResponseWriter, r *http.Request) {
		clock.Set(1_500)
		serve(inner, r, func(w http.ResponseWriter, _ *http.Request) {
			during = admitsNow(t, store, api)
			w.WriteHeader(http.StatusBadGateway)
		})
	})
	if after := admitsNow(t, store, api); during != 7 || after != 2 {
		t.Errorf("others admitted: %d during the request and %d after its settle, want 7 and 2 (the difference back, the outer unit kept)", during, after)
	}
	if got, outer := heard.n.Load(), outerHeard.n.Load(); got != 1 || outer != 1 {
		t.Errorf("the observers heard %d (inner) and %d (outer) store errors, want 1 each (the outer part's refund)", got, outer)
	}
	clock.Set(2_000) // the outer unit's entry has aged out; the 9 of others at 1.5 s count
	if late := admitsNow(t, store, api); late != 1 {
		t.Errorf("at 2 s others were admitted %d, want 1", late)
	}
}
