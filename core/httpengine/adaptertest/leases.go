package adaptertest

import (
	"bufio"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// ServeHandler serves GET /x with handler behind the adapter's middleware built
// from store, limits and options, on the adapter's real router.
type ServeHandler func(store core.Store, limits httpengine.Limits, handler http.Handler, options ...httpengine.Option) http.Handler

// RunLeases runs a concurrency policy of one slot through an adapter and its
// router, on a real server, and checks that every lease taken is released exactly
// once, when the handler ends: when it returns, panics, hijacks the connection
// (which outlives it) or streams; when the client leaves mid-response; when
// http.TimeoutHandler, around the router, answers before the handler ends (the
// slot is held until then). A request that another policy of the stack refuses
// takes no lease, and one that a Limiter nested in the handler refuses gives back
// the lease its middleware took. Each case runs with and without a settle function
// (with one, the net/http adapter wraps the response writer).
func RunLeases(t *testing.T, serve ServeHandler) {
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	once := core.MustPolicy("once", core.FixedWindow, core.PerMinute(1))
	key := func(*http.Request) (string, error) { return "client", nil }
	roomy := core.MustPolicy("roomy", core.TokenBucket, core.PerMinute(1000))
	for _, settled := range []bool{false, true} {
		var options []httpengine.Option
		name := "plain"
		if settled {
			options = append(options, httpengine.WithSettle(func(_ *http.Request, _ int, charged int64) int64 { return charged }))
			name = "settled"
		}
		// with is limits, and a roomy rate policy for the settle function to cover.
		with := func(limits httpengine.Limits) httpengine.Limits {
			if !settled {
				return limits
			}
			return httpengine.Stack(limits, httpengine.Limit(roomy, key))
		}
		start := func(t *testing.T, limits httpengine.Limits, handler http.Handler) (*ledger, *httptest.Server) {
			t.Helper()
			l := newLedger(t)
			srv := httptest.NewUnstartedServer(serve(l, with(limits), handler, options...))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panics are the test's
			srv.Start()
			t.Cleanup(srv.Close)
			return l, srv
		}

		t.Run(name+"/returns", func(t *testing.T) {
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
			for range 3 {
				if code, body := get(t, srv); code != http.StatusOK || body != "ok" {
					t.Fatalf("%d %q, want 200 ok", code, body)
				}
				l.settled(t, 0)
			}
			l.check(t, 3)
		})

		t.Run(name+"/panics", func(t *testing.T) {
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
			for range 3 {
				fire(t, srv) // a broken connection, or the router's 500
				l.settled(t, 0)
			}
			l.check(t, 3)
		})

		t.Run(name+"/hijacks", func(t *testing.T) {
			var conns sync.WaitGroup
			hangUp := make(chan struct{})
			defer func() { close(hangUp); conns.Wait() }()
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				conn, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
				rw.Flush()
				conns.Add(1)
				go func() { defer conns.Done(); <-hangUp; conn.Close() }() // the connection outlives the handler
			}))
			for range 3 {
				if code, body := get(t, srv); code != http.StatusOK || body != "hijacked" {
					t.Fatalf("%d %q, want 200 hijacked", code, body)
				}
				l.settled(t, 0) // released when the handler returned, the connection still open
			}
			l.check(t, 3)
		})

		t.Run(name+"/streams", func(t *testing.T) {
			next := make(chan struct{})
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RawQuery == "short" {
					return
				}
				io.WriteString(w, "first\n")
				http.NewResponseController(w).Flush()
				<-next
				io.WriteString(w, "second\n")
			}))
			resp, lines := stream(context.Background(), t, srv)
			if first := <-lines; first != "first" {
				t.Fatalf("first line %q", first)
			}
			if code, _ := getQuery(t, srv, "short"); code != http.StatusTooManyRequests {
				t.Fatalf("while the stream runs: %d, want 429", code)
			}
			close(next)
			if second := <-lines; second != "second" {
				t.Fatalf("second line %q", second)
			}
			resp.Body.Close()
			l.freeAgain(t, srv, "short", "after the stream")
		})

		t.Run(name+"/client leaves mid-response", func(t *testing.T) {
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RawQuery == "short" {
					return
				}
				rc := http.NewResponseController(w)
				for {
					if _, err := io.WriteString(w, "more\n"); err != nil {
						return
					}
					if err := rc.Flush(); err != nil {
						return
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}))
			ctx, leave := context.WithCancel(context.Background())
			resp, lines := stream(ctx, t, srv)
			<-lines
			leave()
			resp.Body.Close()
			l.freeAgain(t, srv, "short", "after the client left")
		})

		t.Run(name+"/http.TimeoutHandler around the router", func(t *testing.T) {
			leave := make(chan struct{})
			var first atomic.Bool
			l := newLedger(t)
			h := http.TimeoutHandler(serve(l, with(httpengine.Limit(one, key)), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if first.CompareAndSwap(false, true) {
					<-leave // work that goes on after the timeout's answer, its context ignored
				}
			}), options...), 250*time.Millisecond, "timed out")
			srv := httptest.NewServer(h)
			defer srv.Close()
			if code, _ := get(t, srv); code != http.StatusServiceUnavailable {
				t.Fatalf("slow handler: %d, want 503 from the TimeoutHandler", code)
			}
			if code, _ := get(t, srv); code != http.StatusTooManyRequests {
				t.Fatalf("while the slow handler still works: %d, want 429", code)
			}
			close(leave)
			l.freeAgain(t, srv, "", "after the slow handler ended")
		})

		t.Run(name+"/refused by another policy of the stack", func(t *testing.T) {
			l, srv := start(t, httpengine.Stack(httpengine.Limit(one, key), httpengine.Limit(once, key)), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			admittedOnceOfThree(t, srv)
			l.settled(t, 0)
			l.check(t, 1)
			l.slotFree(t, one)
		})

		t.Run(name+"/refused by a nested limiter", func(t *testing.T) {
			var inner *httpengine.Limiter
			l, srv := start(t, httpengine.Limit(one, key), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				nestedServe(inner, w, r)
			}))
			inner = httpengine.Must(l, httpengine.Limit(once, key))
			admittedOnceOfThree(t, srv) // refused by the nested limiter
			l.settled(t, 0)
			l.check(t, 3)
			l.slotFree(t, one)
		})
	}
}

// nestedServe runs a request through l, inside a handler, the way an adapter does,
// with an empty handler.
func nestedServe(l *httpengine.Limiter, w http.ResponseWriter, r *http.Request) {
	t := l.Start(r, w.Header())
	switch t.Disposition() {
	case httpengine.Denied:
		httpengine.WriteDenial(w, t.Denial())
		t.Finish(http.StatusTooManyRequests, true)
		return
	case httpengine.Failed:
		httpengine.WriteError(w, t.Err())
		t.Finish(0, true)
		return
	}
	t.Finish(http.StatusOK, true)
}

// get sends GET /x to srv and returns the status and body (0 when the request
// failed).
func get(t *testing.T, srv *httptest.Server) (int, string) {
	t.Helper()
	return getQuery(t, srv, "")
}

// getQuery is get with a query string.
func getQuery(t *testing.T, srv *httptest.Server, query string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/x?" + query)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// fire is get, for a request whose response does not matter.
func fire(t *testing.T, srv *httptest.Server) { t.Helper(); get(t, srv) }

// stream sends GET /x to srv with ctx and returns the response, whose body's lines
// arrive on lines as they come.
func stream(ctx context.Context, t *testing.T, srv *httptest.Server) (*http.Response, <-chan string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d, want 200", resp.StatusCode)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(resp.Body)
		for scanner.Scan() {
			lines <- strings.TrimSpace(scanner.Text())
		}
	}()
	return resp, lines
}

// ledger is a store that records the concurrency leases it grants and the
// releases it is asked for.
type ledger struct {
	core.Store
	mu       sync.Mutex
	taken    []uint64
	released map[uint64]int
}

func newLedger(t *testing.T) *ledger {
	return &ledger{Store: newStore(t), released: map[uint64]int{}}
}

func (l *ledger) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := l.Store.Decide(ctx, req)
	if err == nil && res.Allowed && res.Lease != 0 {
		l.mu.Lock()
		l.taken = append(l.taken, res.Lease)
		l.mu.Unlock()
	}
	return res, err
}

func (l *ledger) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	allowed, err := l.Store.DecideStack(ctx, reqs, results)
	if err == nil && allowed {
		l.mu.Lock()
		for i := range results {
			if results[i].Lease != 0 {
				l.taken = append(l.taken, results[i].Lease)
			}
		}
		l.mu.Unlock()
	}
	return allowed, err
}

// Release counts a release once the store has made it: counted first, settled
// could see the lease released while the store still held it, and the test's next
// request was refused (TestLeasesThroughTheRouter/plain/hijacks, once in CI).
func (l *ledger) Release(ctx context.Context, req core.Request, lease uint64) error {
	err := l.Store.Release(ctx, req, lease)
	l.mu.Lock()
	l.released[lease]++
	l.mu.Unlock()
	return err
}

func (l *ledger) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	return l.Store.(core.Refunder).Refund(ctx, req, chargedAt)
}

// settled waits until every lease taken but want has been released: the handler
// of a request may end after its client has the response.
func (l *ledger) settled(t *testing.T, want int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		open := 0
		for _, id := range l.taken {
			if l.released[id] == 0 {
				open++
			}
		}
		l.mu.Unlock()
		if open == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d leases held, want %d", open, want)
		}
	}
}

// freeAgain requires that once the first request's lease is released, the slot
// admits a request with query (200, when: after what), whose lease is released
// too: two leases in all, each released once.
func (l *ledger) freeAgain(t *testing.T, srv *httptest.Server, query, when string) {
	t.Helper()
	l.settled(t, 0)
	if code, _ := getQuery(t, srv, query); code != http.StatusOK {
		t.Fatalf("%s: %d, want 200", when, code)
	}
	l.settled(t, 0)
	l.check(t, 2)
}

// check requires that taken leases were granted, each released exactly once, and
// that no release named a lease never granted.
func (l *ledger) check(t *testing.T, taken int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.taken) != taken {
		t.Errorf("%d leases granted, want %d", len(l.taken), taken)
	}
	granted := map[uint64]bool{}
	for _, id := range l.taken {
		granted[id] = true
		if n := l.released[id]; n != 1 {
			t.Errorf("lease %d released %d times, want once", id, n)
		}
	}
	for id, n := range l.released {
		if !granted[id] {
			t.Errorf("lease %d, never granted, released %d times", id, n)
		}
	}
}

// slotFree requires that p's one slot for the client is free.
func (l *ledger) slotFree(t *testing.T, p core.Policy) {
	t.Helper()
	req := core.Request{Policy: p, Key: "client", Lease: 1 << 62}
	res, err := l.Store.Decide(context.Background(), req)
	if err != nil || !res.Allowed {
		t.Fatalf("the slot is held: %+v, %v", res, err)
	}
	if err := l.Store.Release(context.Background(), req, req.Lease); err != nil {
		t.Fatal(err)
	}
}

// admittedOnceOfThree gets srv three times: a policy of one request a minute admits
// the first and refuses the other two.
func admittedOnceOfThree(t *testing.T, srv *httptest.Server) {
	t.Helper()
	if code, _ := get(t, srv); code != http.StatusOK {
		t.Fatalf("first: %d, want 200", code)
	}
	for range 2 {
		if code, _ := get(t, srv); code != http.StatusTooManyRequests {
			t.Fatalf("over once: %d, want 429", code)
		}
	}
}
