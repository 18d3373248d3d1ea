package httpengine_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

func TestConcurrencyLeaseHeldForTheHandler(t *testing.T) {
	store, _ := newStore(t)
	spy := &releaseSpy{Store: store}
	export := core.MustConcurrencyPolicy("export", 2, time.Minute)
	l := httpengine.Must(spy, httpengine.Limit(export, headerKey))

	inside, leave := make(chan struct{}), make(chan struct{})
	blocking := func(http.ResponseWriter, *http.Request) { inside <- struct{}{}; <-leave }
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); serve(l, request("192.0.2.1:1", "X-Key", "a"), blocking) }()
		<-inside
	}
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != http.StatusTooManyRequests {
		t.Fatalf("third in flight: %d, want 429", w.Code)
	} else if w.Header().Get("Retry-After") != "1" || w.Header().Get("RateLimit") != `"export";r=0;t=1` {
		t.Errorf("third in flight: Retry-After %q RateLimit %q", w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
	}
	if w := serve(l, request("192.0.2.1:1", "X-Key", "b"), ok); w.Code != 200 {
		t.Fatalf("another key: %d, want 200", w.Code)
	}
	close(leave)
	wg.Wait()
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != 200 {
		t.Fatalf("after both returned: %d, want 200", w.Code)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.released) != 4 {
		t.Fatalf("%d releases, want 4 (one per admitted request)", len(spy.released))
	}
	seen := map[uint64]bool{}
	for _, id := range spy.released {
		if id == 0 || seen[id] {
			t.Errorf("lease id %d zero or repeated in %v", id, spy.released)
		}
		seen[id] = true
	}
}

func TestConcurrencyLeaseReleasedOnPanic(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	l := httpengine.Must(store, httpengine.Limit(one, headerKey))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the handler's panic to continue", v)
			}
		}()
		serve(l, request("192.0.2.1:1", "X-Key", "a"), func(http.ResponseWriter, *http.Request) { panic("boom") })
	}()
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != 200 {
		t.Fatalf("after the panic: %d, want 200 (lease released)", w.Code)
	}
}

func TestConcurrencyLeaseReleasedWithADetachedContextWhenTheClientLeaves(t *testing.T) {
	store, _ := newStore(t)
	spy := &releaseSpy{Store: store}
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	l := httpengine.Must(spy, httpengine.Limit(one, headerKey), httpengine.WithReleaseTimeout(3*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	r := request("192.0.2.1:1", "X-Key", "a").WithContext(ctx)
	serve(l, r, func(_ http.ResponseWriter, r *http.Request) {
		cancel() // the client goes away while the handler runs
		<-r.Context().Done()
	})
	spy.mu.Lock()
	if len(spy.released) != 1 || spy.ctxErrs[0] != nil || !spy.deadline[0] {
		t.Errorf("release calls %v with context errors %v, deadlines %v: want one on a live, bounded context", spy.released, spy.ctxErrs, spy.deadline)
	}
	spy.mu.Unlock()
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != 200 {
		t.Fatalf("after the cancelled request: %d, want 200", w.Code)
	}
}

func TestLeakyBucketWaitsItsSlot(t *testing.T) {
	store, _ := newStore(t)
	// 50 per second: one slot every 20ms; a queue of 2 slots after the head.
	queue := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(50), core.WithBurst(2))
	l := httpengine.Must(store, httpengine.Limit(queue, headerKey))
	// The store's clock stands still, so the three admitted requests are queued at
	// 0, 20ms and 40ms; a fourth finds the queue full and is refused at once.
	var delays []time.Duration
	for i := range 4 {
		w := serveTimed(t, l, &delays)
		want := 200
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if w != want {
			t.Fatalf("request %d: %d, want %d", i+1, w, want)
		}
	}
	for i, want := range []time.Duration{0, 20 * time.Millisecond, 40 * time.Millisecond} {
		if delays[i] < want {
			t.Errorf("request %d waited %v, want at least %v", i+1, delays[i], want)
		}
	}
	if delays[3] >= 20*time.Millisecond {
		t.Errorf("the refused request waited %v; a full queue refuses at once", delays[3])
	}
}

func serveTimed(t *testing.T, l *httpengine.Limiter, delays *[]time.Duration) int {
	t.Helper()
	start := time.Now()
	w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok)
	*delays = append(*delays, time.Since(start))
	return w.Code
}

func TestLeakyBucketGivesTheSlotBackWhenTheClientLeaves(t *testing.T) {
	store, _ := newStore(t)
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(time.Hour), core.WithBurst(1))
	l := httpengine.Must(store, httpengine.Limit(queue, headerKey))
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != 200 {
		t.Fatalf("head of the queue: %d", w.Code)
	}
	// The second waits an hour for its slot; its client leaves after 10ms.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	ran := false
	serve(l, request("192.0.2.1:1", "X-Key", "a").WithContext(ctx), func(http.ResponseWriter, *http.Request) { ran = true })
	if ran {
		t.Fatal("the handler ran for a client that left while queued")
	}
	// Its slot was given back, so the next one is queued (and we leave at once,
	// after the decision: a store refuses to decide for a cancelled context).
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	tk := l.Start(request("192.0.2.1:1", "X-Key", "a"), http.Header{})
	if tk.Disposition() != httpengine.Admitted || tk.Delay() != time.Hour {
		t.Fatalf("after the refund: %v with delay %v, want admitted with a 1h wait", tk.Disposition(), tk.Delay())
	}
	if err := tk.Wait(ctx2); err == nil {
		t.Fatal("Wait on a cancelled context returned nil")
	}
	tk.Finish(0, false)
}

func TestShadowModeNeverRefuses(t *testing.T) {
	store, _ := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(time.Hour), core.WithBurst(1))
	obs := &recorder{}
	l := httpengine.Must(store, httpengine.Stack(httpengine.Limit(one, headerKey), httpengine.Limit(queue, headerKey)),
		httpengine.WithShadow(), httpengine.WithObserver(obs))
	for i := range 3 {
		start := time.Now()
		w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok)
		if w.Code != 200 || w.Header().Get("Retry-After") != "" {
			t.Fatalf("request %d: %d Retry-After %q; shadow mode never refuses", i+1, w.Code, w.Header().Get("Retry-After"))
		}
		if time.Since(start) > 500*time.Millisecond {
			t.Fatalf("request %d waited in shadow mode", i+1)
		}
		if i == 1 && w.Header().Get("RateLimit") != `"one";r=0;t=60, "queue";r=1;t=3600` {
			t.Errorf("request 2 fields %q", w.Header().Get("RateLimit"))
		}
	}
	want := [][]httpengine.Verdict{{"allowed", "allowed"}, {"shadow_denied", "uncharged"}, {"shadow_denied", "uncharged"}}
	for i := range want {
		for j := range want[i] {
			if obs.verdicts[i][j] != want[i][j] {
				t.Fatalf("verdicts %v, want %v", obs.verdicts, want)
			}
		}
	}
}

// A concurrency policy's quota comes back when requests in flight end, not after a
// time: its RateLimit member carries no t unless it refused the request, when t is
// the short wait that Retry-After says too. Sent as the lease timeout (60 here), a
// client reading "r=0;t=60" on the last admitted slot would hold off for a minute,
// and one reading "r=1;t=60" would think one more request was left for a minute.
// With a lease timeout of 1 s, an admission's old t (1) equals a refusal's, which
// the field memo must still tell apart.
func TestConcurrencyFieldsCarryNoLeaseTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{time.Minute, time.Second} {
		store, _ := newStore(t)
		export := core.MustConcurrencyPolicy("export", 2, timeout)
		api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
		single := httpengine.Must(store, httpengine.Limit(export, headerKey))
		stack := httpengine.Must(store, httpengine.Stack(httpengine.Limit(api, headerKey), httpengine.Limit(export, headerKey)))
		check := func(what, got, want string) {
			t.Helper()
			if got != want {
				t.Errorf("lease timeout %v: %s: RateLimit %q, want %q", timeout, what, got, want)
			}
		}

		first, end1 := holding(single, "a")
		check("first slot", first, `"export";r=1`)
		last, end2 := holding(single, "a")
		check("last slot", last, `"export";r=0`)
		refused := serve(single, request("192.0.2.1:1", "X-Key", "a"), ok)
		check("refused", refused.Header().Get("RateLimit"), `"export";r=0;t=1`)
		if got := refused.Header().Get("Retry-After"); got != "1" {
			t.Errorf("lease timeout %v: refused: Retry-After %q, want 1", timeout, got)
		}
		// The last slot, admitted again right after the refusal: the memo of the
		// refusal's value (r=0;t=1) must not answer for it.
		end1()
		last, end1 = holding(single, "a")
		check("last slot after a refusal", last, `"export";r=0`)
		end1()
		end2()

		inStack, end := holding(stack, "b")
		check("in a stack", inStack, `"api";r=9;t=6, "export";r=1`)
		end()
	}
}

// holding serves a request of key through l with a handler that stays in flight
// until end is called, and returns the RateLimit field the handler saw ("" when
// the request was not admitted).
func holding(l *httpengine.Limiter, key string) (field string, end func()) {
	seen, leave, done := make(chan string, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		serve(l, request("192.0.2.1:1", "X-Key", key), func(w http.ResponseWriter, _ *http.Request) {
			seen <- w.Header().Get("RateLimit")
			<-leave
		})
	}()
	end = func() { close(leave); <-done }
	select {
	case field = <-seen:
	case <-done:
	}
	return field, end
}

// A handler that outlives its lease timeout loses its slot: the lease lapses and
// another request is admitted (the lease timeout bounds what a hung handler can
// hold). Its release, when it finally returns, frees nothing of the request
// admitted since.
func TestHandlerOutlivingItsLease(t *testing.T) {
	store, clock := newStore(t)
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	l := httpengine.Must(store, httpengine.Limit(one, headerKey))
	_, endSlow := holding(l, "a")
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != http.StatusTooManyRequests {
		t.Fatalf("within the lease timeout: %d, want 429", w.Code)
	}
	clock.Advance(time.Minute)
	admitted, endNext := holding(l, "a")
	if admitted == "" {
		t.Fatal("once the slow handler's lease lapsed: refused, want admitted")
	}
	endSlow() // its late release
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != http.StatusTooManyRequests {
		t.Fatalf("after the slow handler's late release, the next one in flight: %d, want 429", w.Code)
	}
	endNext()
	if w := serve(l, request("192.0.2.1:1", "X-Key", "a"), ok); w.Code != http.StatusOK {
		t.Fatalf("after both ended: %d, want 200", w.Code)
	}
}
