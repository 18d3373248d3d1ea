package nethttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// mergeAfterTimeout is a store whose decisions of the policy named "route" (a
// route limiter merging with the app-wide decision) wait until the request's
// context is done, as when http.TimeoutHandler gives up on the handler while the
// route limiter is still deciding; then they decide, on a context that is not
// cancelled.
type mergeAfterTimeout struct{ *memory.Store }

func (s mergeAfterTimeout) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() == "route" {
		<-ctx.Done()
		ctx = context.WithoutCancel(ctx)
	}
	return s.Store.Decide(ctx, req)
}

// http.TimeoutHandler between an app-wide and a route limiter: the app-wide
// handler returns (and finishes its decision) while the route limiter is still
// merging with that decision. The merge must complete against a decision that
// is not recycled under it (the race detector watches), and each policy is
// charged once.
func TestTimeoutHandlerBetweenTheLayers(t *testing.T) {
	store := mergeAfterTimeout{newStore(t)}
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
	app := nethttp.Middleware(store, httplimit.Limit(api, peerIP.Key))
	perRoute := nethttp.Middleware(store, httplimit.Limit(route, peerIP.Key))
	innerDone := make(chan struct{})
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(innerDone)
		perRoute(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	})
	h := app(http.TimeoutHandler(inner, time.Millisecond, "timed out"))
	if w := get(t, h, "/"); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 from the TimeoutHandler", w.Code)
	}
	<-innerDone
	for _, p := range []core.Policy{api, route} {
		res, err := store.Store.Decide(context.Background(), core.Request{Policy: p, Key: "ip:203.0.113.5"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Remaining != 8 {
			t.Errorf("%s: %d left after a probe, want 8 (the request charged it once)", p.Name(), res.Remaining)
		}
	}
}
