package httpengine_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// A policy only a shadow Limiter declares, merged with an enforcing Limiter's
// decision, that would have refused the request: its verdict is shadow_denied
// (docs/metrics.md), not "allowed" (admitted and charged), whichever of the two
// is the app-wide one. Shadow mode is there to show what a trial policy refuses.
func TestMergedShadowRefusalIsShadowDenied(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(100))
	trial := core.MustPolicy("trial", core.FixedWindow, core.PerMinute(1))
	for _, shadowInner := range []bool{true, false} {
		store, _ := newStore(t)
		obs := &recorder{}
		enforced := httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithObserver(obs))
		observed := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(trial, peerKey)),
			httpengine.WithShadow(), httpengine.WithObserver(obs))
		outer, inner := enforced, observed
		if !shadowInner {
			outer, inner = observed, enforced
		}
		for range 2 {
			serve(outer, request("192.0.2.1:1"), func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(serve(inner, r, ok).Code)
			})
		}
		obs.mu.Lock()
		got := fmt.Sprint(obs.verdicts)
		obs.mu.Unlock()
		// Second request: api allowed, trial would have refused (r=0).
		if got != "[[allowed allowed] [allowed shadow_denied]]" {
			t.Errorf("shadow inner %v: verdicts %s, want [[allowed allowed] [allowed shadow_denied]]", shadowInner, got)
		}
	}
}
