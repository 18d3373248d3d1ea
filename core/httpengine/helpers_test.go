package httpengine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// newStore returns a memory store on a virtual clock, closed at the end of the test.
func newStore(t testing.TB) (*memory.Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock()
	store, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store, clock
}

// serve drives one request through l the way an adapter does, with next as the
// handler (given Ticket.Request, so that a Limiter nested in next merges with l's
// decision), and returns the recorded response.
func serve(l *httpengine.Limiter, r *http.Request, next http.HandlerFunc) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	t := l.Start(r, w.Header())
	switch t.Disposition() {
	case httpengine.Skipped:
		next(w, r)
		return w
	case httpengine.Denied:
		httpengine.WriteDenial(w, t.Denial())
		t.Finish(http.StatusTooManyRequests, true)
		return w
	case httpengine.Failed:
		httpengine.WriteError(w, t.Err())
		t.Finish(0, true)
		return w
	}
	if err := t.Wait(r.Context()); err != nil {
		t.Finish(0, false)
		return w
	}
	completed := false
	defer func() { t.Finish(w.Code, completed) }()
	next(w, t.Request())
	completed = true
	return w
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// request returns a GET from the given peer with the given headers ("Name: value").
func request(peer string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/resource", nil)
	r.RemoteAddr = peer
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// headerKey keys requests by the X-Key header, reporting a missing one as ErrNoKey.
func headerKey(r *http.Request) (string, error) {
	if v := r.Header.Get("X-Key"); v != "" {
		return "k:" + v, nil
	}
	return "", errNoKey
}

// errNoKey reports a missing identity as the key functions of keyfuncs do.
var errNoKey = fmt.Errorf("%w: no X-Key header", keyfuncs.ErrNoKey)

// recorder is an Observer that keeps what it sees.
type recorder struct {
	mu       sync.Mutex
	verdicts [][]httpengine.Verdict
	keys     [][]string
	fellBack []bool
	errs     []error
}

func (o *recorder) OnDecision(e *httpengine.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var vs []httpengine.Verdict
	var ks []string
	for i := range e.Results {
		vs = append(vs, e.Verdict(i))
		ks = append(ks, e.Requests[i].Key)
	}
	o.verdicts = append(o.verdicts, vs)
	o.keys = append(o.keys, ks)
	o.fellBack = append(o.fellBack, e.FellBack)
}

func (o *recorder) OnError(_ *http.Request, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}

// brokenStore fails every call with err.
type brokenStore struct{ err error }

func (s brokenStore) Decide(context.Context, core.Request) (core.Result, error) {
	return core.Result{}, s.err
}
func (s brokenStore) DecideStack(context.Context, []core.Request, []core.Result) (bool, error) {
	return false, s.err
}
func (s brokenStore) Release(context.Context, core.Request, uint64) error { return s.err }
func (s brokenStore) Close() error                                        { return nil }

// plainStore hides every method of a store but those of core.Store (no Refund).
type plainStore struct{ core.Store }

// releaseSpy records the context state of each Release and passes calls on.
type releaseSpy struct {
	core.Store
	mu       sync.Mutex
	released []uint64
	ctxErrs  []error
	deadline []bool
}

func (s *releaseSpy) Release(ctx context.Context, req core.Request, lease uint64) error {
	s.mu.Lock()
	_, hasDeadline := ctx.Deadline()
	s.released = append(s.released, lease)
	s.ctxErrs = append(s.ctxErrs, ctx.Err())
	s.deadline = append(s.deadline, hasDeadline)
	s.mu.Unlock()
	return s.Store.Release(ctx, req, lease)
}

var errBackend = errors.New("dial tcp 10.1.2.3:6379: connection refused")
