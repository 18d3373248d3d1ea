package adaptertest

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// runLateGiveBacks gives an app-wide token bucket's charge back a second after it
// was taken, once the bucket has refilled and the client has spent it again: the
// route refuses the request, or its handler fails and the app-wide settle function
// keeps nothing. The request's charge had come back by refilling already; given back
// again, it let the client spend one unit more than the bucket holds at one instant.
//
// The route's key function takes the second, as a login form trickled by its client
// or a slow identity lookup would, and the client spends the refilled bucket on
// GET /y meanwhile.
func runLateGiveBacks(t *testing.T, build Build) {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	bucket := core.MustPolicy("bucket", core.TokenBucket, core.PerSecond(10)) // holds 10
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	for _, how := range []string{"refused by the route", "settled to nothing"} {
		t.Run("a give-back after its bucket refilled, "+how, func(t *testing.T) {
			clock := storetest.NewClock()
			store, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			var h http.Handler
			spentMeanwhile := 0
			slowKey := func(r *http.Request) (string, error) {
				if r.Header.Get("X-Value") == "slow" {
					clock.Advance(time.Second) // the bucket is full again
					for range 10 {
						if send(h, "/y").Code == http.StatusOK {
							spentMeanwhile++
						}
					}
				}
				return ip.Key(r)
			}
			var options []httpengine.Option
			if how == "settled to nothing" {
				options = append(options, httpengine.WithSettle(refundOn5xx))
			}
			h = build(Layout{
				App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(bucket, ip.Key), options...)},
				Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(gate, slowKey))},
			})
			want, left := http.StatusBadGateway, 10 // the gate admits; the handler fails
			if how == "refused by the route" {
				if w := send(h, "/x"); w.Code != http.StatusOK { // the gate's one request a minute
					t.Fatalf("first GET /x: %d, want 200", w.Code)
				}
				want, left = http.StatusTooManyRequests, 9
			}
			for range left - 1 { // the bucket keeps one for the slow request
				send(h, "/y")
			}
			if w := send(h, "/x", "X-Value", "slow", "X-Status", "502"); w.Code != want {
				t.Fatalf("the slow GET /x: %d (RateLimit %q), want %d", w.Code, w.Header().Get("RateLimit"), want)
			}
			if spentMeanwhile != 10 {
				t.Fatalf("the refilled bucket admitted %d meanwhile, want 10", spentMeanwhile)
			}
			if w := send(h, "/y"); w.Code != http.StatusTooManyRequests {
				t.Fatalf("GET /y at the same instant: %d (RateLimit %q), want 429: the bucket admitted %d at one instant, holding 10",
					w.Code, w.Header().Get("RateLimit"), spentMeanwhile+1)
			}
		})
	}
}
