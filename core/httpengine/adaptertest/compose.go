package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Layout is a router for RunComposition: limiters app-wide and on one route.
type Layout struct {
	// App are installed app-wide, outermost first: r.Use (chi, gin, echo's e.Use),
	// or middleware around the ServeMux.
	App []*httpengine.Limiter
	// Route are installed on GET /x only, outermost first (chi's r.With, gin's and
	// echo's route middlewares, a ServeMux pattern's handler chain). GET /y has none.
	Route []*httpengine.Limiter
	// ValueKey, when set, asks for a middleware that runs before every limiter and
	// stores the request's X-Value header under ValueKey the router's own way:
	// gin's and echo's c.Set, the request context (context.WithValue) for chi and
	// net/http.
	ValueKey string
}

// Build returns the adapter's real router for layout, serving GET /x and GET /y.
// GET /x answers with the status Status reads from the request, GET /y with 200.
type Build func(layout Layout) http.Handler

// Status is the status GET /x answers with: the request's X-Status header, or 200.
func Status(r *http.Request) int {
	if code, err := strconv.Atoi(r.Header.Get("X-Status")); err == nil && code >= 200 && code <= 599 {
		return code
	}
	return http.StatusOK
}

// failingPolicy is a store whose decisions of one policy fail as unavailable, as
// a Cluster node holding only that policy's keys would.
type failingPolicy struct {
	core.Store
	core.Refunder
	policy string
}

func (s failingPolicy) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() == s.policy {
		return core.Result{}, fmt.Errorf("%w: its node is down", core.ErrStoreUnavailable)
	}
	return s.Store.Decide(ctx, req)
}

// refundOn5xx is a settle function that keeps nothing of a request that failed on
// the server.
func refundOn5xx(_ *http.Request, status int, charged int64) int64 {
	if status >= 500 {
		return 0
	}
	return charged
}

// RunComposition runs the nesting scenarios through an adapter: limiters declared
// app-wide and per route make one decision per request, and values stored the
// router's way reach the key functions.
func RunComposition(t *testing.T, build Build) {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	type step struct {
		path, value string
		status      string // the X-Status header: what GET /x answers
		code        int
		rateLimit   string
		policy      string
	}
	run := func(t *testing.T, h http.Handler, steps []step) {
		t.Helper()
		for i, s := range steps {
			w := send(h, s.path, "X-Value", s.value, "X-Status", s.status)
			if w.Code != s.code || w.Header().Get("RateLimit") != s.rateLimit ||
				(s.policy != "" && w.Header().Get("RateLimit-Policy") != s.policy) ||
				len(w.Header().Values("RateLimit")) > 1 || len(w.Header().Values("RateLimit-Policy")) > 1 {
				t.Fatalf("request %d (%s): %d\n RateLimit %q\n RateLimit-Policy %q\nwant %d\n RateLimit %q\n RateLimit-Policy %q",
					i+1, s.path, w.Code, w.Header().Values("RateLimit"), w.Header().Values("RateLimit-Policy"), s.code, s.rateLimit, s.policy)
			}
		}
	}
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))

	t.Run("same policy charged once at the inner cost", func(t *testing.T) {
		store := newStore(t)
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithCost(5))},
		})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"api";r=5;t=60`, policy: `"api";q=10;w=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=4;t=60`, policy: `"api";q=10;w=60`},
			{path: "/x", code: 429, rateLimit: `"api";r=4;t=60`, policy: `"api";q=10;w=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=3;t=60`},
		})
	})

	t.Run("a leaky bucket at two levels waits once", func(t *testing.T) {
		// 2 per second, a queue of 5: an emission interval of 500 ms. One decision
		// at cost 5 on an idle queue waits nothing; so must a route's cost 5 under
		// an app-wide cost 1, whose difference extends the app-wide charge's slot.
		queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(2), core.WithBurst(5))
		store := newStore(t)
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(queue, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(queue, ip.Key), httpengine.WithCost(5))},
		})
		start := time.Now()
		w := send(h, "/x")
		if elapsed := time.Since(start); w.Code != 200 || elapsed > 250*time.Millisecond {
			t.Fatalf("cost 5 on an idle queue, declared at two levels: %d after %v; want 200 at once", w.Code, elapsed)
		}
		if got := w.Header().Get("RateLimit"); got != `"queue";r=1;t=3` {
			t.Fatalf("RateLimit %q, want the queue charged 5 once", got)
		}
	})

	t.Run("different policies all-or-nothing", func(t *testing.T) {
		store := newStore(t)
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(1))
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(route, ip.Key))},
		})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"api";r=9;t=60, "route";r=0;t=60`, policy: `"api";q=10;w=60, "route";q=1;w=60`},
			// The route refuses: the response lists both policies, and the app-wide
			// one keeps what it had (r=9), as the next request shows.
			{path: "/x", code: 429, rateLimit: `"api";r=9;t=60, "route";r=0;t=60`, policy: `"api";q=10;w=60, "route";q=1;w=60`},
			{path: "/x", code: 429, rateLimit: `"api";r=9;t=60, "route";r=0;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=8;t=60`, policy: `"api";q=10;w=60`},
		})
	})

	t.Run("a route that cannot be decided spends nothing app-wide", func(t *testing.T) {
		store := newStore(t)
		down := failingPolicy{Store: store, Refunder: store.(core.Refunder), policy: "route"}
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(down, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(down, httpengine.Limit(route, ip.Key))},
		})
		for i := range 3 {
			if w := send(h, "/x"); w.Code != http.StatusServiceUnavailable {
				t.Fatalf("request %d to the failing route: %d, want 503", i+1, w.Code)
			}
		}
		run(t, h, []step{{path: "/y", code: 200, rateLimit: `"api";r=9;t=60`}})
	})

	t.Run("an app-wide concurrency lease is released by a route's refusal", func(t *testing.T) {
		store := newStore(t)
		slots := core.MustConcurrencyPolicy("slots", 1, time.Minute)
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(1))
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(slots, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(route, ip.Key))},
		})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"slots";r=0, "route";r=0;t=60`},
			// The route refuses: the one slot is free again (r=1), and stays free.
			{path: "/x", code: 429, rateLimit: `"slots";r=1, "route";r=0;t=60`},
			{path: "/y", code: 200, rateLimit: `"slots";r=0`},
			{path: "/y", code: 200, rateLimit: `"slots";r=0`},
		})
	})

	t.Run("the same policy under two keys charges both, all-or-nothing", func(t *testing.T) {
		// App-wide, "api" per client address; on the route, "api" per account at
		// cost 5. Two buckets: the address's is charged 1 by every request, the
		// account's 5 by each on the route; a refusal by either charges neither.
		// The fields list "api" once, as the bucket nearer its limit.
		store := newStore(t)
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, valueHeader), httpengine.WithCost(5))},
		})
		run(t, h, []step{
			{path: "/x", value: "alice", code: 200, rateLimit: `"api";r=5;t=60`, policy: `"api";q=10;w=60`},
			{path: "/x", value: "alice", code: 200, rateLimit: `"api";r=0;t=60`, policy: `"api";q=10;w=60`},
			{path: "/x", value: "alice", code: 429, rateLimit: `"api";r=0;t=60`, policy: `"api";q=10;w=60`},
			// The address's bucket: 10 - 2, the refusal given back, then this one.
			{path: "/y", code: 200, rateLimit: `"api";r=7;t=60`},
			{path: "/x", value: "bob", code: 200, rateLimit: `"api";r=5;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=5;t=60`},
		})
	})

	t.Run("a route on another store that refuses spends nothing app-wide", func(t *testing.T) {
		store := newStore(t)
		gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(newStore(t), httpengine.Limit(gate, ip.Key))},
		})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"api";r=9;t=60, "gate";r=0;t=60`},
			{path: "/x", code: 429, rateLimit: `"api";r=9;t=60, "gate";r=0;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=8;t=60`},
		})
	})

	t.Run("a route that refuses spends nothing of an app-wide PerIP", func(t *testing.T) {
		perIP, err := httpengine.PerIP(core.PerHour(2))
		if err != nil {
			t.Fatal(err)
		}
		gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
		h := build(Layout{
			App:   []*httpengine.Limiter{perIP},
			Route: []*httpengine.Limiter{httpengine.Must(newStore(t), httpengine.Limit(gate, ip.Key))},
		})
		for i, want := range []struct {
			path string
			code int
			left string
		}{{"/x", 200, `"per-ip";r=1;`}, {"/x", 429, `"per-ip";r=1;`}, {"/y", 200, `"per-ip";r=0;`}} {
			if w := send(h, want.path); w.Code != want.code || !strings.HasPrefix(w.Header().Get("RateLimit"), want.left) {
				t.Fatalf("request %d (%s): %d %q, want %d and %s…", i+1, want.path, w.Code, w.Header().Get("RateLimit"), want.code, want.left)
			}
		}
	})

	t.Run("a shadow route weighing an app-wide policy never refuses", func(t *testing.T) {
		// The route tries out a weight of 4 for "api" in shadow mode: the app
		// enforces "api" at its own cost, 1, and the trial never refuses.
		store := newStore(t)
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithCost(4), httpengine.WithShadow())},
		})
		steps := []step{}
		for left := 9; left >= 0; left-- {
			steps = append(steps, step{path: "/x", code: 200, rateLimit: `"api";r=` + strconv.Itoa(left) + `;t=60`})
		}
		run(t, h, append(steps, step{path: "/x", code: 429, rateLimit: `"api";r=0;t=60`}))
	})

	t.Run("stack under an app-wide limit", func(t *testing.T) {
		store := newStore(t)
		account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(2))
		perIP := core.MustPolicy("ip", core.FixedWindow, core.PerMinute(5))
		h := build(Layout{
			App: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Stack(
				httpengine.Limit(account, valueHeader),
				httpengine.Limit(perIP, ip.Key),
			), httpengine.WithCost(2))},
		})
		run(t, h, []step{
			// The route's cost (2) applies to its own policies; "api", which only the
			// app declares, costs the app's 1.
			{path: "/x", value: "alice", code: 200, rateLimit: `"api";r=9;t=60, "account";r=0;t=60, "ip";r=3;t=60`,
				policy: `"api";q=10;w=60, "account";q=2;w=60, "ip";q=5;w=60`},
			{path: "/x", value: "alice", code: 429, rateLimit: `"api";r=9;t=60, "account";r=0;t=60, "ip";r=3;t=60`},
			{path: "/x", value: "bob", code: 200, rateLimit: `"api";r=8;t=60, "account";r=0;t=60, "ip";r=1;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=7;t=60`},
		})
	})

	t.Run("route costs from one app-wide middleware", func(t *testing.T) {
		store := newStore(t)
		// The table names GET /x both ways: net/http's pattern and the others'.
		costs := map[string]int64{"GET /x": 5, "/x": 5}
		h := build(Layout{App: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithRouteCosts(costs))}})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"api";r=5;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=4;t=60`},
			{path: "/x", code: 429, rateLimit: `"api";r=4;t=60`},
		})
	})

	t.Run("app-wide settle survives a route limiter", func(t *testing.T) {
		store := newStore(t)
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithSettle(refundOn5xx))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(route, ip.Key))},
		})
		run(t, h, []step{
			{path: "/x", status: "502", code: 502, rateLimit: `"api";r=9;t=60, "route";r=9;t=60`},
			// The app-wide settle gave api's charge back; the route has none.
			{path: "/x", code: 200, rateLimit: `"api";r=9;t=60, "route";r=8;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=8;t=60`},
		})
	})

	t.Run("route settle refunds only the route's policies", func(t *testing.T) {
		store := newStore(t)
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(10))
		h := build(Layout{
			App: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(route, ip.Key),
				httpengine.WithCost(5), httpengine.WithSettle(refundOn5xx))},
		})
		run(t, h, []step{
			{path: "/x", status: "502", code: 502, rateLimit: `"api";r=9;t=60, "route";r=5;t=60`},
			// The route's 5 came back; api, which the route does not declare, keeps its 1.
			{path: "/x", code: 200, rateLimit: `"api";r=8;t=60, "route";r=5;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=7;t=60`},
		})
	})

	t.Run("a route's difference settled after a window's end gives each window its part", func(t *testing.T) {
		// App-wide api at cost 1 in the minute that ends; the route's key function
		// takes a millisecond, in which others of the client spend 5 of the next
		// minute; the route charges its difference, 2, there. Its settle keeps
		// nothing of a 502: the new minute gets back its 2 (the app-wide 1 is
		// named for the ended minute, which takes nothing back).
		clock := storetest.NewClock()
		store, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		clock.Advance(time.Minute - time.Millisecond)
		slowKey := func(r *http.Request) (string, error) {
			key, err := ip.Key(r)
			clock.Advance(time.Millisecond)
			if _, derr := store.Decide(r.Context(), core.Request{Policy: api, Key: key, Cost: 5}); derr != nil {
				t.Error(derr)
			}
			return key, err
		}
		h := build(Layout{
			App: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, slowKey),
				httpengine.WithCost(3), httpengine.WithSettle(refundOn5xx))},
		})
		run(t, h, []step{
			{path: "/x", status: "502", code: 502, rateLimit: `"api";r=3;t=60`},
			// The next minute holds the others' 5 and this one.
			{path: "/y", code: 200, rateLimit: `"api";r=4;t=60`},
		})
	})

	t.Run("a limiter on another store between the layers", func(t *testing.T) {
		store := newStore(t)
		peer := core.MustPolicy("peer", core.FixedWindow, core.PerMinute(100))
		h := build(Layout{
			App: []*httpengine.Limiter{
				httpengine.Must(store, httpengine.Limit(api, ip.Key)),
				httpengine.Must(newStore(t), httpengine.Limit(peer, ip.Key)),
			},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithCost(5))},
		})
		run(t, h, []step{
			// Charged once, at the route's cost: 5, not 1 + 5. The fields list the
			// other store's policy first: it decided separately.
			{path: "/x", code: 200, rateLimit: `"peer";r=99;t=60, "api";r=5;t=60`,
				policy: `"peer";q=100;w=60, "api";q=10;w=60`},
			// The innermost limiter writes the fields, and hides neither layer.
			{path: "/y", code: 200, rateLimit: `"api";r=4;t=60, "peer";r=98;t=60`,
				policy: `"api";q=10;w=60, "peer";q=100;w=60`},
			// Refused by the route: nothing of either store is spent (peer keeps 98).
			{path: "/x", code: 429, rateLimit: `"peer";r=98;t=60, "api";r=4;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=3;t=60, "peer";r=97;t=60`},
		})
	})

	t.Run("a shadow limiter never refuses through an enforcing one", func(t *testing.T) {
		global := core.MustPolicy("global", core.FixedWindow, core.PerMinute(1))
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(3))
		for _, shadowApp := range []bool{true, false} {
			store := newStore(t)
			app := httpengine.Must(store, httpengine.Limit(global, ip.Key))
			onRoute := httpengine.Must(store, httpengine.Limit(route, ip.Key))
			if shadowApp {
				app = httpengine.Must(store, httpengine.Limit(global, ip.Key), httpengine.WithShadow())
			} else {
				onRoute = httpengine.Must(store, httpengine.Limit(route, ip.Key), httpengine.WithShadow())
			}
			h := build(Layout{App: []*httpengine.Limiter{app}, Route: []*httpengine.Limiter{onRoute}})
			if shadowApp {
				// An app-wide policy tried out in shadow mode: the route enforces its own
				// policy alone, and the shadow one only reports.
				run(t, h, []step{
					{path: "/x", code: 200, rateLimit: `"global";r=0;t=60, "route";r=2;t=60`},
					{path: "/x", code: 200, rateLimit: `"global";r=0;t=60, "route";r=1;t=60`},
					{path: "/x", code: 200, rateLimit: `"global";r=0;t=60, "route";r=0;t=60`},
					{path: "/x", code: 429, rateLimit: `"global";r=0;t=60, "route";r=0;t=60`},
				})
				continue
			}
			// A route policy tried out in shadow mode under an enforcing app-wide one.
			run(t, h, []step{
				{path: "/x", code: 200, rateLimit: `"global";r=0;t=60, "route";r=2;t=60`},
				{path: "/x", code: 429, rateLimit: `"global";r=0;t=60`},
			})
		}
	})

	t.Run("a shadow limiter sharing a policy with an enforcing one never refuses", func(t *testing.T) {
		// The route weighs "api" as the app does and tries "trial" out: "api" is
		// charged once and enforced, "trial" only reports.
		trial := core.MustPolicy("trial", core.FixedWindow, core.PerMinute(1))
		store := newStore(t)
		h := build(Layout{
			App: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key))},
			Route: []*httpengine.Limiter{httpengine.Must(store,
				httpengine.Stack(httpengine.Limit(api, ip.Key), httpengine.Limit(trial, ip.Key)), httpengine.WithShadow())},
		})
		run(t, h, []step{
			{path: "/x", code: 200, rateLimit: `"api";r=9;t=60, "trial";r=0;t=60`},
			{path: "/x", code: 200, rateLimit: `"api";r=8;t=60, "trial";r=0;t=60`},
			{path: "/y", code: 200, rateLimit: `"api";r=7;t=60`},
		})
	})

	t.Run("one event per request", func(t *testing.T) {
		store := newStore(t)
		route := core.MustPolicy("route", core.FixedWindow, core.PerMinute(1))
		var events eventLog
		h := build(Layout{
			App:   []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, ip.Key), httpengine.WithObserver(&events))},
			Route: []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(route, ip.Key), httpengine.WithObserver(&events))},
		})
		send(h, "/x")
		send(h, "/x")
		send(h, "/y")
		want := []string{"api:allowed route:allowed", "api:uncharged route:denied", "api:allowed"}
		if got := events.list(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("events %q, want %q", got, want)
		}
	})

	t.Run("router values reach the key functions", func(t *testing.T) {
		for _, kind := range []struct {
			name string
			key  keyfuncs.KeyFunc
		}{{"tenant", keyfuncs.Tenant("tenant")}, {"user", keyfuncs.User("user")}} {
			store := newStore(t)
			policy := core.MustPolicy(kind.name, core.FixedWindow, core.PerMinute(1))
			fields := `"` + kind.name + `";r=0;t=60`
			for _, where := range []string{"app", "route"} {
				layout := Layout{ValueKey: kind.name}
				// Without the value, both requests would fall back to the client's
				// address and share its bucket.
				l := httpengine.Must(store, httpengine.Limit(policy, kind.key))
				if where == "app" {
					layout.App = []*httpengine.Limiter{l}
				} else {
					layout.Route = []*httpengine.Limiter{l}
				}
				h := build(layout)
				prefix := where + "-"
				run(t, h, []step{
					{path: "/x", value: prefix + "acme", code: 200, rateLimit: fields},
					{path: "/x", value: prefix + "tiny", code: 200, rateLimit: fields},
					{path: "/x", value: prefix + "acme", code: 429, rateLimit: fields},
				})
			}
		}
	})

	runLateGiveBacks(t, build)

	// The route refunds the app-wide limiter's excess (it charged 2, the route
	// costs 1) and the refund fails; the route's observer panics on that error.
	// The request panics, but the concurrency lease the merged decision took is
	// released: once refunds work again, the route admits.
	t.Run("a panicking error observer during a merge leaks no lease", func(t *testing.T) {
		failing := &atomic.Bool{}
		failing.Store(true)
		store := newStore(t)
		flaky := refundsFailing{Store: store, refunder: store.(core.Refunder), failing: failing}
		export := core.MustConcurrencyPolicy("export", 1, time.Minute)
		h := build(Layout{
			App: []*httpengine.Limiter{httpengine.Must(flaky, httpengine.Limit(api, ip.Key), httpengine.WithCost(2))},
			Route: []*httpengine.Limiter{httpengine.Must(flaky, httpengine.Stack(httpengine.Limit(api, ip.Key), httpengine.Limit(export, ip.Key)),
				httpengine.WithObserver(panickingOnError{}))},
		})
		panicsLeakingNoLease(t, h, "observer bug")
		failing.Store(false)
		if w := send(h, "/x"); w.Code != http.StatusOK {
			t.Fatalf("the route once refunds work: %d (RateLimit %q), want 200: a merged request leaked its export lease",
				w.Code, w.Header().Get("RateLimit"))
		}
	})
}

// refundsFailing is a store whose refunds fail while failing is set.
type refundsFailing struct {
	core.Store
	refunder core.Refunder
	failing  *atomic.Bool
}

func (s refundsFailing) Refund(ctx context.Context, req core.Request, decidedAt time.Time) error {
	if s.failing.Load() {
		return errors.New("refund: connection reset")
	}
	return s.refunder.Refund(ctx, req, decidedAt)
}

// panickingOnError is an Observer with a bug: OnError panics.
type panickingOnError struct{}

func (panickingOnError) OnDecision(*httpengine.Event) {}
func (panickingOnError) OnError(*http.Request, error) { panic("observer bug") }

// eventLog records each decision as "policy:verdict" pairs.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) OnDecision(ev *httpengine.Event) {
	s := ""
	for i := range ev.Results {
		if i > 0 {
			s += " "
		}
		s += ev.Results[i].Policy + ":" + string(ev.Verdict(i))
	}
	e.mu.Lock()
	e.events = append(e.events, s)
	e.mu.Unlock()
}

func (e *eventLog) OnError(*http.Request, error) {}

func (e *eventLog) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

// valueHeader keys a request by its X-Value header.
func valueHeader(r *http.Request) (string, error) {
	if v := r.Header.Get("X-Value"); v != "" {
		return "account:" + v, nil
	}
	return "", keyfuncs.ErrNoKey
}
