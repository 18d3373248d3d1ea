package resilient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// neverOpen keeps a breaker closed through any number of failures in a row, for
// tests of slow calls; a rate of failures opens it only with WithFailureRate's calls.
var neverOpen = resilient.WithBreaker(1_000_000, resilient.DefaultCooldown)

// errDown is a fake outage: the shared store is unreachable.
var errDown = fmt.Errorf("fake: %w: connection refused", core.ErrStoreUnavailable)

// errWrongType is a fake permanent error: the store answered, but not as a working one.
var errWrongType = errors.New("fake: WRONGTYPE Operation against a key holding the wrong kind of value")

// fakeShared is a shared store whose behaviour the test sets: it decides on a memory
// store at the test's clock, or fails with err, or hangs until ctx ends (or, with
// ignoreCtx, until release is closed).
type fakeShared struct {
	mem *memory.Store

	mu        sync.Mutex
	err       error
	hang      bool
	ignoreCtx bool
	release   chan struct{}

	afterDecide  func() // when set, called after each Decide and DecideStack the store answered
	beforeDecide func() // when set, called before each Decide is applied

	calls    atomic.Int64 // Decide, DecideStack and Release calls that reached the store
	closed   atomic.Bool
	finished atomic.Int64 // calls that returned
}

func newFakeShared(t testing.TB, clock *storetest.Clock) *fakeShared {
	options := []memory.Option{memory.WithSweepInterval(0)}
	if clock != nil {
		options = append(options, memory.WithClock(clock.Now))
	}
	mem, err := memory.New(options...)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeShared{mem: mem, release: make(chan struct{})}
}

func (f *fakeShared) set(err error, hang, ignoreCtx bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err, f.hang, f.ignoreCtx = err, hang, ignoreCtx
}

func (f *fakeShared) fail(err error) { f.set(err, false, false) }
func (f *fakeShared) heal()          { f.set(nil, false, false) }

// enter counts a call and returns its scripted failure, after hanging when told to.
func (f *fakeShared) enter(ctx context.Context) error {
	f.calls.Add(1)
	f.mu.Lock()
	err, hang, ignoreCtx, release := f.err, f.hang, f.ignoreCtx, f.release
	f.mu.Unlock()
	switch {
	case hang && ignoreCtx:
		<-release
		return errDown
	case hang:
		<-ctx.Done()
		return fmt.Errorf("fake: %w", ctx.Err())
	}
	return err
}

func (f *fakeShared) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	defer f.finished.Add(1)
	if err := f.enter(ctx); err != nil {
		return core.Result{}, err
	}
	f.mu.Lock()
	before := f.beforeDecide
	f.mu.Unlock()
	if before != nil {
		before()
	}
	res, err := f.mem.Decide(ctx, req)
	f.runAfterDecide()
	return res, err
}

// runAfterDecide calls afterDecide, when set.
func (f *fakeShared) runAfterDecide() {
	f.mu.Lock()
	after := f.afterDecide
	f.mu.Unlock()
	if after != nil {
		after()
	}
}

func (f *fakeShared) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	defer f.finished.Add(1)
	if err := f.enter(ctx); err != nil {
		return false, err
	}
	allowed, err := f.mem.DecideStack(ctx, reqs, results)
	f.runAfterDecide()
	return allowed, err
}

func (f *fakeShared) Release(ctx context.Context, req core.Request, lease uint64) error {
	defer f.finished.Add(1)
	if err := f.enter(ctx); err != nil {
		return err
	}
	return f.mem.Release(ctx, req, lease)
}

func (f *fakeShared) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	defer f.finished.Add(1)
	if err := f.enter(ctx); err != nil {
		return err
	}
	return f.mem.Refund(ctx, req, chargedAt)
}

func (f *fakeShared) Close() error {
	f.closed.Store(true)
	return f.mem.Close()
}

// recorder is an Monitor that keeps every event.
type recorder struct {
	mu        sync.Mutex
	decisions []resilient.DecisionEvent
	calls     []resilient.StoreCallEvent
	fallbacks []resilient.FallbackEvent
	refusals  []resilient.LocalRefusalEvent
}

func (r *recorder) OnDecision(e *resilient.DecisionEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions = append(r.decisions, *e)
}

func (r *recorder) OnStoreCall(e *resilient.StoreCallEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, *e)
}

func (r *recorder) OnFallback(e *resilient.FallbackEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fallbacks = append(r.fallbacks, *e)
}

func (r *recorder) OnLocalRefusal(e *resilient.LocalRefusalEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusals = append(r.refusals, *e)
}

// errorKinds lists the kinds of the failed store calls.
func (r *recorder) errorKinds() []resilient.ErrorKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var kinds []resilient.ErrorKind
	for _, c := range r.calls {
		if c.Kind != "" {
			kinds = append(kinds, c.Kind)
		}
	}
	return kinds
}

// transitions lists the fallback transitions as "policy>to".
func (r *recorder) transitions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.fallbacks {
		out = append(out, f.Policy+">"+f.To())
	}
	return out
}

// outcomes lists the decisions as "policy:outcome/via".
func (r *recorder) outcomes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.decisions {
		out = append(out, fmt.Sprintf("%s:%s/%s", d.Policy, d.Outcome, d.Via))
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rig is a Store over a fakeShared at a virtual clock, with a recorder and a log.
type rig struct {
	clock  *storetest.Clock
	shared *fakeShared
	rec    *recorder
	log    *syncBuffer
	store  *resilient.Store
	reads  atomic.Int64 // how many times the Store has read the clock
}

// rigDeadline is the deadline of the rigs' stores: long, so that a slow machine never
// turns a decision of a healthy fake into a timeout. Tests of hanging calls set
// testDeadline.
const rigDeadline = 5 * time.Second

// testDeadline is the deadline of tests whose store hangs.
const testDeadline = 20 * time.Millisecond

func newRig(t testing.TB, options ...resilient.Option) *rig {
	t.Helper()
	clock := storetest.NewClock()
	shared := newFakeShared(t, clock)
	r := newRigOver(t, clock, shared, options...)
	r.shared = shared
	t.Cleanup(func() {
		shared.mu.Lock()
		select {
		case <-shared.release:
		default:
			close(shared.release)
		}
		shared.mu.Unlock()
	})
	return r
}

// newRigOver is a rig whose Store is over shared, a store at clock; its shared field
// is left nil. The Store is closed when t ends.
func newRigOver(t testing.TB, clock *storetest.Clock, shared core.Store, options ...resilient.Option) *rig {
	t.Helper()
	r := &rig{clock: clock, rec: &recorder{}, log: &syncBuffer{}}
	local, err := memory.New(memory.WithClock(r.clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	now := func() time.Time { r.reads.Add(1); return r.clock.Now() }
	base := []resilient.Option{
		resilient.WithClock(now), resilient.WithLocalStore(local), resilient.WithMonitor(r.rec),
		resilient.WithLogger(logger), resilient.WithDeadline(rigDeadline), resilient.WithBreaker(3, time.Second),
		resilient.WithFailureRate(0.5, 3, time.Minute), resilient.WithRecoveryProbes(1),
		resilient.WithStoreName("fake"),
	}
	r.store, err = resilient.New(shared, append(base, options...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.store.Close() })
	return r
}

func (r *rig) decide(t testing.TB, p core.Policy, key string) core.Result {
	t.Helper()
	res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: key})
	if err != nil {
		t.Fatalf("decide %s %q: %v", p.Name(), key, err)
	}
	return res
}

// probeTimed waits, once a background probe has reached the shared store, until the
// prober has read the clock since: for the probe's outcome, which sets the next probe
// a cooldown after it, or at its next tick, which comes later (unless the probe closed
// the breaker, which stops the prober). An advance made before that read would move
// the next probe a cooldown past the advanced clock.
func (r *rig) probeTimed(t testing.TB) {
	t.Helper()
	reads := r.reads.Load()
	waitFor(t, "the probe's outcome", func() bool {
		return r.reads.Load() > reads || r.store.Breaker() == resilient.BreakerClosed
	})
}

// trip makes the shared store fail and decides, on another key, until the breaker
// is open (tripBreaker).
func (r *rig) trip(t testing.TB, p core.Policy) {
	t.Helper()
	r.shared.fail(errDown)
	tripBreaker(t, r.store, p)
}

// tripBreaker decides p on another key with store, whose shared store fails, until
// its breaker is open: once the failures ask for a confirming probe, which fails too,
// or, in a window that already holds many answered calls, once they reach its failure
// rate. Between failures it gives the probe 2 ms (more failures while it runs do no
// harm): waiting a second after each took a rig with 15 answered calls 10 s to trip.
func tripBreaker(t testing.TB, store *resilient.Store, p core.Policy) {
	t.Helper()
	untilOpen(t, store.Breaker, func() { store.Decide(context.Background(), core.Request{Policy: p, Key: "trip"}) })
}

// tripFor decides p on other keys, a new one each time, with store, whose shared
// store fails, until the breaker that decides whether req calls the shared store is
// open. On a store that tracks failures per Cluster slot, each key's slot breaker
// opens on its own, and req's opens with those of its master; new keys reach the
// slots of every master, wherever req's lives.
func tripFor(t testing.TB, store *resilient.Store, req core.Request) {
	t.Helper()
	i := 0
	untilOpen(t, func() resilient.BreakerState { return store.BreakerFor(req) }, func() {
		i++
		store.Decide(context.Background(), core.Request{Policy: req.Policy, Key: fmt.Sprintf("trip%d", i)})
	})
}

// untilOpen calls fail, a decision whose call fails, until breaker reports open, at
// most 500 times, giving the failures' confirming probe, in the background, 2 ms
// after each.
func untilOpen(t testing.TB, breaker func() resilient.BreakerState, fail func()) {
	t.Helper()
	for i := 0; i < 500 && breaker() != resilient.BreakerOpen; i++ {
		fail()
		for end := time.Now().Add(2 * time.Millisecond); breaker() != resilient.BreakerOpen && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}
	if got := breaker(); got != resilient.BreakerOpen {
		t.Fatalf("after 500 failures the breaker is %v, want open", got)
	}
}
