package adaptertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// Mount serves GET /x (200) behind the adapter's middleware built from store,
// limits and options, on the adapter's real router.
type Mount func(store core.Store, limits httpengine.Limits, options ...httpengine.Option) http.Handler

// RunOptions runs the engine's per-request features through an adapter: shadow
// mode, a skipper, a policy per request and the leaky-bucket wait.
func RunOptions(t *testing.T, mount Mount) {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))

	t.Run("shadow", func(t *testing.T) {
		h := mount(newStore(t), httpengine.Limit(one, ip.Key), httpengine.WithShadow())
		for i := range 3 {
			w := send(h, "/x")
			if w.Code != http.StatusOK || w.Header().Get("Retry-After") != "" {
				t.Fatalf("request %d: %d, Retry-After %q: shadow mode never refuses", i+1, w.Code, w.Header().Get("Retry-After"))
			}
			if i > 0 && w.Header().Get("RateLimit") != `"one";r=0;t=60` {
				t.Fatalf("request %d: RateLimit %q", i+1, w.Header().Get("RateLimit"))
			}
		}
	})
	t.Run("skip", func(t *testing.T) {
		h := mount(newStore(t), httpengine.Limit(one, ip.Key),
			httpengine.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Internal") == "yes" }))
		for range 3 {
			if w := send(h, "/x", "X-Internal", "yes"); w.Code != http.StatusOK || w.Header().Get("RateLimit") != "" {
				t.Fatalf("skipped request: %d %q", w.Code, w.Header().Get("RateLimit"))
			}
		}
		send(h, "/x")
		if w := send(h, "/x"); w.Code != http.StatusTooManyRequests {
			t.Fatalf("second request not skipped: %d", w.Code)
		}
	})
	t.Run("policy per request", func(t *testing.T) {
		free := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(1))
		pro := core.MustPolicy("plan", core.FixedWindow, core.PerMinute(3))
		h := mount(newStore(t), httpengine.LimitFunc(func(r *http.Request) (core.Policy, error) {
			if r.Header.Get("X-Plan") == "pro" {
				return pro, nil
			}
			return free, nil
		}, ip.Key))
		if w := send(h, "/x"); w.Code != 200 || w.Header().Get("RateLimit-Policy") != `"plan";q=1;w=60` {
			t.Fatalf("free plan: %d %q", w.Code, w.Header().Get("RateLimit-Policy"))
		}
		if w := send(h, "/x"); w.Code != http.StatusTooManyRequests {
			t.Fatalf("free plan, second request: %d", w.Code)
		}
		if w := send(h, "/x", "X-Plan", "pro"); w.Code != 200 || w.Header().Get("RateLimit") != `"plan";r=2;t=60` {
			t.Fatalf("after the upgrade: %d %q", w.Code, w.Header().Get("RateLimit"))
		}
	})
	t.Run("an identity that cannot be checked now", func(t *testing.T) {
		// The API-key validator's backend is down: the client did nothing wrong and
		// may retry, so 503 with Retry-After, not 400, and nothing is charged.
		down := func(context.Context, string) (bool, error) { return false, errors.New("auth backend down") }
		h := mount(newStore(t), httpengine.Limit(one, keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", down), ip.Key)))
		for range 2 {
			if w := send(h, "/x", "X-API-Key", "k1"); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
				t.Fatalf("validator down: %d, Retry-After %q; want 503 with Retry-After: 1", w.Code, w.Header().Get("Retry-After"))
			}
		}
		if w := send(h, "/x"); w.Code != http.StatusOK {
			t.Fatalf("the client's own bucket after two undecided requests: %d, want 200", w.Code)
		}
	})
	t.Run("a cost the policy never admits", func(t *testing.T) {
		// The cost comes from the request (a batch's size): a client pricing it above
		// the policy's capacity gets 400, not a 5xx, and spends nothing.
		five := core.MustPolicy("five", core.TokenBucket, core.PerMinute(5))
		h := mount(newStore(t), httpengine.Limit(five, ip.Key), httpengine.WithCostFunc(func(r *http.Request) (int64, error) {
			return strconv.ParseInt(r.Header.Get("X-Items"), 10, 64)
		}))
		for range 2 {
			if w := send(h, "/x", "X-Items", "6"); w.Code != http.StatusBadRequest ||
				w.Header().Get("Content-Type") != httpengine.ProblemContentType {
				t.Fatalf("cost 6 of a policy of 5: %d %q, want 400 with a problem body", w.Code, w.Header().Get("Content-Type"))
			}
		}
		if w := send(h, "/x", "X-Items", "5"); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"five";r=0;t=60` {
			t.Fatalf("cost 5 after two refused costs of 6: %d %q, want 200 and 0 left (nothing spent)", w.Code, w.Header().Get("RateLimit"))
		}
	})
	t.Run("leaky bucket waits", func(t *testing.T) {
		queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(50), core.WithBurst(1))
		h := mount(newStore(t), httpengine.Limit(queue, ip.Key))
		start := time.Now()
		if w := send(h, "/x"); w.Code != 200 {
			t.Fatalf("head of the queue: %d", w.Code)
		}
		if w := send(h, "/x"); w.Code != 200 || time.Since(start) < 20*time.Millisecond {
			t.Fatalf("second in the queue: %d after %v, want 200 after its 20ms slot", w.Code, time.Since(start))
		}
		if w := send(h, "/x"); w.Code != http.StatusTooManyRequests {
			t.Fatalf("full queue: %d, want 429 at once", w.Code)
		}
	})
	t.Run("a deadline ends the wait", func(t *testing.T) {
		queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(1))
		h := mount(newStore(t), httpengine.Limit(queue, ip.Key))
		if w := send(h, "/x"); w.Code != 200 {
			t.Fatalf("head of the queue: %d", w.Code)
		}
		// A deadline set before the middleware (a server's, a proxy's) ends the
		// second request's 1s wait: the client, still there, learns why.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		r := httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx)
		r.RemoteAddr = "203.0.113.5:4000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Fatalf("a wait ended by its deadline: %d, Retry-After %q; want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
		}
	})
	t.Run("a client that leaves during its wait", func(t *testing.T) {
		queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(1))
		h := mount(newStore(t), httpengine.Limit(queue, ip.Key))
		if w := send(h, "/x"); w.Code != 200 {
			t.Fatalf("head of the queue: %d", w.Code)
		}
		// The client goes away during its wait (net/http cancels the request's
		// context): 499, as nginx logs it, never a 5xx a client can cause at will.
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		r := httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx)
		r.RemoteAddr = "203.0.113.5:4000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != httpengine.StatusClientClosedRequest || w.Body.String() == "ok" {
			t.Fatalf("a client that left during its wait: %d %q, want 499 and no handler", w.Code, w.Body.String())
		}
	})
	// An observer that panics when told of an admitted request's decision (at the
	// request's end) panics the request, as any panic of the application's code
	// does (which gin.Default's recovery answers with 500), but the limiter has
	// settled first: the concurrency lease is released, so the next request is
	// admitted rather than refused until the leaked lease times out.
	t.Run("a panicking observer leaks no lease", func(t *testing.T) {
		export := core.MustConcurrencyPolicy("export", 1, time.Minute)
		panicsLeakingNoLease(t, mount(newStore(t), httpengine.Limit(export, ip.Key), httpengine.WithObserver(panickingObserver{})), "metrics bug")
	})
	// A settle function that panics, on a stack whose concurrency lease comes after
	// the policy it settles: the lease is still released.
	t.Run("a panicking settle function leaks no lease", func(t *testing.T) {
		api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
		export := core.MustConcurrencyPolicy("export", 1, time.Minute)
		settle := httpengine.WithSettle(func(*http.Request, int, int64) int64 { panic("settle bug") })
		panicsLeakingNoLease(t, mount(newStore(t), httpengine.Stack(httpengine.Limit(api, ip.Key), httpengine.Limit(export, ip.Key)), settle), "settle bug")
	})
}

// panicsLeakingNoLease sends three requests through h, whose limiter's one-lease
// concurrency policy must be released by each although the application's code
// panics with bug at the request's end.
func panicsLeakingNoLease(t *testing.T, h http.Handler, bug string) {
	t.Helper()
	for i := range 3 {
		w := httptest.NewRecorder()
		panicked := func() (p any) {
			defer func() { p = recover() }()
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			r.RemoteAddr = "203.0.113.5:4000"
			h.ServeHTTP(w, r)
			return nil
		}()
		// The panic reaches the caller, or the router's own recovery answers 500
		// (gin.Default); a 429 is a lease an earlier request never released.
		if reachedCaller := panicked == bug && w.Code == http.StatusOK; !reachedCaller && w.Code != http.StatusInternalServerError {
			t.Fatalf("request %d: %d, recovered %v; want the panic %q, or the router's 500 for it", i, w.Code, panicked, bug)
		}
	}
}

// panickingObserver is an Observer with a bug: OnDecision panics for admitted requests.
type panickingObserver struct{}

func (panickingObserver) OnDecision(e *httpengine.Event) {
	if e.Allowed {
		panic("metrics bug")
	}
}

func (panickingObserver) OnError(*http.Request, error) {}

// newStore is a memory store on a clock that stands still at a window boundary, so
// that the fields the suite expects do not depend on when it runs.
func newStore(t *testing.T) core.Store {
	t.Helper()
	s, err := memory.New(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// send serves a GET of path from one client (203.0.113.5) through h, with the
// given header name and value pairs, and returns what h wrote.
func send(h http.Handler, path string, headers ...string) *httptest.ResponseRecorder {
	return sendMethod(h, http.MethodGet, path, headers...)
}

// sendMethod is send with another method than GET.
func sendMethod(h http.Handler, method, path string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "203.0.113.5:4000"
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
