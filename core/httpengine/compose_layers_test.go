package httpengine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// through drives one request through limiters nested outermost first, on one
// response, as adapters do. An admitted layer's leaky-bucket wait is served by
// moving clock on (the store's clock), so the next layer decides when the adapter
// would let it; the request's total wait is returned with the response.
func through(clock *storetest.Clock, r *http.Request, limiters ...*httpengine.Limiter) (*httptest.ResponseRecorder, time.Duration) {
	w := httptest.NewRecorder()
	var waited time.Duration
	var step func(r *http.Request, i int)
	step = func(r *http.Request, i int) {
		if i == len(limiters) {
			w.WriteHeader(http.StatusOK)
			return
		}
		tk := limiters[i].Start(r, w.Header())
		switch tk.Disposition() {
		case httpengine.Skipped:
			step(r, i+1)
			return
		case httpengine.Denied:
			httpengine.WriteDenial(w, tk.Denial())
			tk.Finish(http.StatusTooManyRequests, true)
			return
		case httpengine.Failed:
			httpengine.WriteError(w, tk.Err())
			tk.Finish(0, true)
			return
		}
		waited += tk.Delay()
		clock.Advance(tk.Delay())
		defer func() { tk.Finish(w.Code, true) }()
		step(tk.Request(), i+1)
	}
	step(r, 0)
	return w, waited
}

// answer is what a client sees of a response: its status, rate-limit fields,
// Retry-After and how long it waited. The RateLimit field of a request that
// waited is left out: a layered request's inner limiter writes it after the outer
// one's wait, when the queue has moved on, and one decision writes it before.
func answer(w *httptest.ResponseRecorder, waited time.Duration) string {
	rateLimit := fmt.Sprintf("%q", w.Header().Values("RateLimit"))
	if waited > 0 {
		rateLimit = "(after a wait)"
	}
	return fmt.Sprintf("%d RateLimit %s RateLimit-Policy %q Retry-After %q waited %v", w.Code,
		rateLimit, w.Header().Values("RateLimit-Policy"), w.Header().Values("Retry-After"), waited)
}

// eachAlgorithm is a policy "api" of 10 a minute per algorithm (bursts of 10).
func eachAlgorithm() []core.Policy {
	var policies []core.Policy
	for _, a := range []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingLog, core.SlidingWindow, core.LeakyBucket} {
		policies = append(policies, core.MustPolicy("api", a, core.PerMinute(10)))
	}
	return policies
}

// sameAsOneDecision plays script (a request for each 0, a clock move otherwise)
// twice: through single, a Limiter alone, and through layered, the same rules
// under outer Limiters on the same store, and requires the same answers: one
// decision per request, charged once at the innermost declared cost.
func sameAsOneDecision(t *testing.T, single func(core.Store) []*httpengine.Limiter, layered func(core.Store) []*httpengine.Limiter, script []time.Duration) {
	t.Helper()
	oneStore, oneClock := newStore(t)
	layerStore, layerClock := newStore(t)
	one, layers := single(oneStore), layered(layerStore)
	for i, d := range script {
		if d != 0 {
			oneClock.Advance(d)
			layerClock.Advance(d)
			continue
		}
		want := answer(through(oneClock, request("192.0.2.1:1"), one...))
		got := answer(through(layerClock, request("192.0.2.1:1"), layers...))
		if got != want && !laterResets(got, want) {
			t.Fatalf("step %d:\n layered %s\n one     %s", i, got, want)
		}
	}
}

// resetField matches the t of a RateLimit member.
var resetField = regexp.MustCompile(`;t=(\d+)`)

// laterResets reports whether got, a refusal, differs from want only by later
// resets (t) of its members: a charge given back from a sliding log leaves the
// log's other entries, and the layered decision, which charged and refunded the
// newest, does not know when the one before it ages out.
func laterResets(got, want string) bool {
	if !strings.HasPrefix(got, "429 ") {
		return false
	}
	g, w := resetField.FindAllStringSubmatch(got, -1), resetField.FindAllStringSubmatch(want, -1)
	if len(g) != len(w) || resetField.ReplaceAllString(got, ";t=_") != resetField.ReplaceAllString(want, ";t=_") {
		return false
	}
	for i := range g {
		a, _ := strconv.Atoi(g[i][1])
		b, _ := strconv.Atoi(w[i][1])
		if a < b {
			return false
		}
	}
	return true
}

// An app-wide cost above the route's, for the same policy and key: the request is
// charged the route's cost, and its fields (r and t) and Retry-After are those of
// one decision at that cost, admitted or refused by another policy of the route,
// on every algorithm; refused, a sliding log's t may be later (laterResets).
//
// The app-wide limiter refuses on its own when its own cost does not fit: the
// script keeps at least 3 in the bucket. An app-wide leaky bucket makes a request
// wait before the route refuses it: the script leaves the queue empty before each
// refusal.
func TestAppWideCostAboveTheRoutesIsOneDecisionAtTheRoutes(t *testing.T) {
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(3))
	s := 6 * time.Second
	script := []time.Duration{0, s, 0, s, 0, s, 0, s, 0, 61 * time.Second, 0, s, 0, time.Second, 0}
	for _, api := range eachAlgorithm() {
		t.Run(string(api.Algorithm()), func(t *testing.T) {
			route := func(store core.Store) *httpengine.Limiter {
				return httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, peerKey), httpengine.Limit(gate, peerKey)))
			}
			sameAsOneDecision(t,
				func(store core.Store) []*httpengine.Limiter { return []*httpengine.Limiter{route(store)} },
				func(store core.Store) []*httpengine.Limiter {
					return []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(3)), route(store)}
				}, script)
		})
	}
}

// A route's cost above the app-wide one, for the same policy and key: admitted or
// refused by the route, the answers are those of one decision at the route's
// cost. (The app-wide limiter refuses on its own, at its own cost, once not even
// that fits: the script keeps at least 1 in the bucket.)
func TestRouteCostAboveTheAppWideIsOneDecisionAtTheRoutes(t *testing.T) {
	script := []time.Duration{0, 0, 0, 20 * time.Second, 0, 0, 45 * time.Second, 0, 0}
	for _, api := range eachAlgorithm() {
		t.Run(string(api.Algorithm()), func(t *testing.T) {
			route := func(store core.Store) *httpengine.Limiter {
				return httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(4))
			}
			sameAsOneDecision(t,
				func(store core.Store) []*httpengine.Limiter { return []*httpengine.Limiter{route(store)} },
				func(store core.Store) []*httpengine.Limiter {
					return []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, peerKey)), route(store)}
				}, script)
		})
	}
}

// An app-wide leaky bucket makes an admitted request wait its slot before the
// route decides; when the route's own policy then refuses, the slot is given back:
// the next request queues where the refused one would have.
func TestAppWideQueueSlotOfARouteRefusalIsGivenBack(t *testing.T) {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	store, clock := newStore(t)
	app := httpengine.Must(store, httpengine.Limit(queue, peerKey))
	route := httpengine.Must(store, httpengine.Limit(gate, peerKey))
	if w, waited := through(clock, request("192.0.2.1:1"), app, route); w.Code != http.StatusOK || waited != 0 {
		t.Fatalf("first: %s", answer(w, waited))
	}
	// Two requests at once: the first's slot is taken, the second waits a second
	// for its own, then the route refuses it.
	w, waited := through(clock, request("192.0.2.1:1"), app, route)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "59" || waited != time.Second {
		t.Fatalf("refused by the route: %s; want 429 after its 1s wait, Retry-After 59", answer(w, waited))
	}
	if got := w.Header().Get("RateLimit"); got != `"queue";r=3;t=0, "gate";r=0;t=59` {
		t.Fatalf("refused by the route: RateLimit %q, want the queue as the refusal left it (idle)", got)
	}
	// One second on, the first request's slot is over: with the refused request's
	// slot given back, the queue is empty, to the millisecond (a refund names the
	// slot's start rounded down, so that it never returns time the queue served).
	if w, waited := through(clock, request("192.0.2.1:1"), app); w.Code != http.StatusOK || waited > time.Millisecond {
		t.Fatalf("after the refusal: %s; want 200 at once, the refused slot given back", answer(w, waited))
	}
}

// A leaky bucket declared at two levels, cost 1 app-wide and 3 on the route: when
// others fill the queue between a request's two charges, the route's difference
// does not fit beside the app-wide slot. One decision at cost 3 fits, as it
// would have before them: the request gives its slot back and is decided again,
// admitted at the queue's end, and charged once.
func TestLeakyBucketRefusedBesideItsSlotIsDecidedAgain(t *testing.T) {
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3))
	store, _ := newStore(t)
	app := httpengine.Must(store, httpengine.Limit(queue, peerKey))
	route := httpengine.Must(store, httpengine.Limit(queue, peerKey), httpengine.WithCost(3))
	h := make(http.Header)
	first := app.Start(request("192.0.2.1:1"), h) // the head of the queue: 1 unit
	if first.Disposition() != httpengine.Admitted {
		t.Fatalf("first, app-wide: %v", first.Disposition())
	}
	// Another request passes both layers meanwhile, and queues 3 units behind it.
	// (The store's clock stands still: the other's wait is served on a clock of its own.)
	if w, _ := through(storetest.NewClock(), request("192.0.2.1:1"), app, route); w.Code != http.StatusOK {
		t.Fatalf("the other request: %d", w.Code)
	}
	tk := route.Start(first.Request(), h)
	if tk.Disposition() != httpengine.Admitted || tk.Delay() != 3*time.Second {
		t.Fatalf("first, on the route: %v after %v, want admitted after the other's 3s", tk.Disposition(), tk.Delay())
	}
	tk.Finish(http.StatusOK, true)
	first.Finish(http.StatusOK, true)
	// The queue holds 6 units, 6 s of service: each request charged 3, once.
	if res := probe(t, store, queue, 1); res.Allowed || res.ResetAfter != 6*time.Second {
		t.Fatalf("the queue after both: %+v, want 6s of it queued, this probe refused", res)
	}
}

// An app-wide policy tried out in shadow mode decides apart from an enforcing
// route with no policy in common, but counts what enforcing it would: a request
// the route refuses is given back, and the fields show it so.
func TestShadowDecisionApartGivesBackARouteRefusal(t *testing.T) {
	global := core.MustPolicy("global", core.FixedWindow, core.PerMinute(10))
	gate := core.MustPolicy("gate", core.FixedWindow, core.PerMinute(1))
	store, clock := newStore(t)
	app := httpengine.Must(store, httpengine.Limit(global, peerKey), httpengine.WithShadow())
	route := httpengine.Must(store, httpengine.Limit(gate, peerKey))
	for i, want := range []string{
		`200 RateLimit ["\"global\";r=9;t=60, \"gate\";r=0;t=60"]`,
		`429 RateLimit ["\"global\";r=9;t=60, \"gate\";r=0;t=60"]`,
	} {
		if w, waited := through(clock, request("192.0.2.1:1"), app, route); !strings.HasPrefix(answer(w, waited), want) {
			t.Fatalf("request %d: %s, want %s", i+1, answer(w, waited), want)
		}
	}
	if res := probe(t, store, global, 1); res.Remaining != 8 {
		t.Fatalf("global after one admitted request and this probe: %d left, want 8", res.Remaining)
	}
}

// A request whose client leaves while a route's leaky bucket makes it wait never
// reaches its handler: it spends nothing of an app-wide limiter on another store
// either, as when the route cannot decide it.
func TestAWaitEndedEarlySpendsNothingOnAnotherStore(t *testing.T) {
	peer := core.MustPolicy("peer", core.FixedWindow, core.PerMinute(10))
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3))
	peerStore, _ := newStore(t)
	store, _ := newStore(t)
	app := httpengine.Must(peerStore, httpengine.Limit(peer, peerKey))
	route := httpengine.Must(store, httpengine.Limit(queue, peerKey))
	probe(t, store, queue, 1) // the head of the queue: the route's request waits a second
	h := make(http.Header)
	outer := app.Start(request("192.0.2.1:1"), h)
	ctx, cancel := context.WithCancel(outer.Request().Context())
	inner := route.Start(outer.Request().WithContext(ctx), h)
	if inner.Disposition() != httpengine.Admitted || inner.Delay() != time.Second {
		t.Fatalf("route: %v after %v, want admitted after 1s", inner.Disposition(), inner.Delay())
	}
	cancel() // the client leaves
	if err := inner.Wait(ctx); err == nil {
		t.Fatal("the wait ended early without an error")
	}
	inner.Finish(0, false)
	outer.Finish(httpengine.StatusClientClosedRequest, true)
	if res := probe(t, peerStore, peer, 1); res.Remaining != 9 {
		t.Fatalf("peer after a request that never reached its handler, and this probe: %d left, want 9", res.Remaining)
	}
}

// countingShared is a shared store that counts the calls that reach it.
type countingShared struct {
	*memory.Store
	calls atomic.Int64
}

func (c *countingShared) Decide(ctx context.Context, r core.Request) (core.Result, error) {
	c.calls.Add(1)
	return c.Store.Decide(ctx, r)
}

func (c *countingShared) DecideStack(ctx context.Context, r []core.Request, res []core.Result) (bool, error) {
	c.calls.Add(1)
	return c.Store.DecideStack(ctx, r, res)
}

func (c *countingShared) Refund(ctx context.Context, r core.Request, at time.Time) error {
	c.calls.Add(1)
	return c.Store.Refund(ctx, r, at)
}

// A flood that a route's cost refuses (5 of the 3 left) under an app-wide cost 1
// of the same policy and key. Layered, each request is charged the app-wide 1,
// which fits, and given it back when the route's difference is refused: 3 shared
// calls a request (the charge, the difference, the refund). Only a sliding window
// decides the whole cost again (its Retry-After differs from the difference's): a
// fourth call on a bare store; through a resilient store, its pre-limiter refuses
// it, as it answers a single limiter's refusals after the first. (Before, every
// algorithm decided the whole cost again, and a refund made the pre-limiter
// forget the key: 4 calls a request, on either store.)
func TestALayeredFloodCallsTheSharedStoreThriceARefusal(t *testing.T) {
	const n = 100
	for _, a := range []core.Algorithm{core.FixedWindow, core.TokenBucket, core.SlidingWindow} {
		for _, pre := range []bool{false, true} {
			for _, layered := range []bool{false, true} {
				api := core.MustPolicy("api", a, core.PerMinute(10))
				clock := storetest.NewClock()
				mem, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
				if err != nil {
					t.Fatal(err)
				}
				shared := &countingShared{Store: mem}
				var store core.Store = shared
				if pre {
					if store, err = resilient.New(shared, resilient.WithClock(clock.Now)); err != nil {
						t.Fatal(err)
					}
				}
				probe(t, store, api, 7)
				limiters := []*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, peerKey), httpengine.WithCost(5))}
				want := map[bool]int64{false: n, true: 1}[pre]
				if layered {
					limiters = append([]*httpengine.Limiter{httpengine.Must(store, httpengine.Limit(api, peerKey))}, limiters...)
					want = 3 * n
					if a == core.SlidingWindow && !pre {
						want = 4 * n
					}
				}
				before := shared.calls.Load()
				for range n {
					if w, waited := through(clock, request("192.0.2.1:1"), limiters...); w.Code != http.StatusTooManyRequests {
						t.Fatalf("%s: %s, want 429", a, answer(w, waited))
					}
				}
				if got := shared.calls.Load() - before; got != want {
					t.Errorf("%s, pre-limiter %v, %d layers: %d shared calls for %d refused requests, want %d", a, pre, len(limiters), got, n, want)
				}
				if pre {
					_ = store.Close()
				}
				_ = mem.Close()
			}
		}
	}
}
