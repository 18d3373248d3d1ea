package resilient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// The layered path as deployed: net/http middlewares, app-wide and a route's, over
// resilient over Redis (standalone and a 3-master Cluster), at a virtual clock that
// Redis and the local store share. The route redeclares the app-wide policy at cost
// 3 a moment after the app-wide charge of 1, so its difference, 2, is a second
// charge at its own instant; the handler fails and the settle keeps nothing. Each
// part must come back to what counted it: a window gets back only its own part, a
// bucket only what it has not refilled. (core/httpengine proves the same on the
// memory store; this is the path users deploy.)
func TestRedisLayeredSettleGivesEachPartBackWhereItWasCharged(t *testing.T) {
	onRedisDeployments(t, func(t *testing.T, client redis.UniversalClient) {
		for _, tc := range []struct {
			name          string
			alg           core.Algorithm
			first, second int64 // the app-wide and the route's decisions, ms after the clock's start (a whole minute)
			during, after int   // others admitted during the request, and at second after its settle
			late, inLate  int64 // others admitted at late ms (when late > 0)
		}{
			// The window of 11 s counted only the difference: 8 others beside it,
			// then its 2 back (3 if the outer unit came back to it too). The
			// window of 10 s has closed.
			{"fixed window", core.FixedWindow, 10_999, 11_000, 8, 2, 0, 0},
			// Two log entries, at 1.0 s and 1.5 s: 7 others beside them, then all
			// 3 back, each from its own entry. At 2 s the entry at 1.0 s has aged
			// out and the 10 of others at 1.5 s count: nothing more (1 more if the
			// outer unit had been taken out of the entries at 1.5 s).
			{"sliding log", core.SlidingLog, 1_000, 1_500, 7, 3, 2_000, 0},
			// A unit per 100 ms: the outer unit has been refilled by the route's
			// decision a second later, so only the difference comes back (3 if the
			// outer unit were given back too).
			{"token bucket", core.TokenBucket, 100_000, 101_000, 8, 2, 0, 0},
			{"gcra", core.GCRA, 200_000, 201_000, 8, 2, 0, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				clock := storetest.NewClock()
				store := newRigOver(t, clock, newPartition(t, client, clock, "parts-"+tc.name+":")).store
				api := core.MustPolicy("api", tc.alg, core.PerSecond(10))
				const key = "ip:192.0.2.77"
				admits := func() int {
					n := 0
					for ; n < 100; n++ {
						res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: key, Cost: 1})
						if err != nil {
							t.Fatal(err)
						}
						if !res.Allowed {
							break
						}
					}
					return n
				}
				during := 0
				route := nethttp.Middleware(store, httplimit.Limit(api, keyfuncs.Const(key)), httplimit.WithCost(3),
					httplimit.WithSettle(func(*http.Request, int, int64) int64 { return 0 }))(
					http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
						during = admits()
						w.WriteHeader(http.StatusBadGateway)
					}))
				app := nethttp.Middleware(store, httplimit.Limit(api, keyfuncs.Const(key)))(
					http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						clock.Set(storetest.Start + tc.second)
						route.ServeHTTP(w, r)
					}))
				clock.Set(storetest.Start + tc.first)
				w := httptest.NewRecorder()
				app.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/report", nil))
				if w.Code != http.StatusBadGateway {
					t.Fatalf("the request answered %d, want the handler's 502 (%s)", w.Code, w.Body)
				}
				if after := admits(); during != tc.during || after != tc.after {
					t.Errorf("others admitted: %d during the request and %d after its settle, want %d and %d",
						during, after, tc.during, tc.after)
				}
				if tc.late > 0 {
					clock.Set(storetest.Start + tc.late)
					if n := admits(); int64(n) != tc.inLate {
						t.Errorf("others admitted at %d ms: %d, want %d", tc.late, n, tc.inLate)
					}
				}
			})
		}
	})
}
