package resilient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A clock of WithClock without a monotonic reading (a virtual one, or
// time.Now().UTC(), whose wall time an NTP step moves) may read earlier than when
// the Store was made. Deciding then, healthy or failing, in every mode, is decided
// as usual: it once indexed the breaker's window before its first bucket and
// panicked the request.
func TestClockSteppedBackBeforeNewDecides(t *testing.T) {
	for _, mode := range []resilient.Mode{resilient.Closed, resilient.Open, resilient.Local} {
		for _, back := range []time.Duration{time.Millisecond, 61 * time.Second, time.Hour + 7*time.Second} {
			t.Run(fmt.Sprintf("%s, %v back", mode, back), func(t *testing.T) {
				r := newRig(t, resilient.WithMode(mode))
				r.clock.Advance(-back)
				if res := r.decide(t, perMinute5, "ip:192.0.2.1"); !res.Allowed {
					t.Fatalf("healthy: %+v", res)
				}
				r.shared.fail(errDown)
				for i := range 10 {
					res, err := r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "ip:192.0.2.1"})
					if mode == resilient.Open && (err != nil || !res.Allowed) {
						t.Fatalf("failing, decision %d: Open mode refused: %+v, %v", i+1, res, err)
					}
				}
			})
		}
	}
}
