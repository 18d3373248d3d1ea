package resilient_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// Check decides on the reserved key for every algorithm, a stack and a lease, and
// classifies what goes wrong: permanent errors loudly, outages as unavailable.
func TestCheckClassifies(t *testing.T) {
	ctx := context.Background()
	r := newRig(t)
	if err := r.store.Check(ctx); err != nil {
		t.Fatalf("a working store: %v", err)
	}
	if got := r.shared.calls.Load(); got != int64(len(core.Algorithms()))+2 {
		t.Fatalf("Check made %d calls, want one per algorithm, a release and a stack", got)
	}

	r.shared.fail(errWrongType)
	err := r.store.Check(ctx)
	if !errors.Is(err, resilient.ErrPermanent) || !errors.Is(err, errWrongType) || errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("a broken store: %v", err)
	}
	if log := r.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "fix the deployment") {
		t.Fatalf("not logged at error level:\n%s", log)
	}

	if r.store.Breaker() != resilient.BreakerClosed || len(r.rec.fallbacks) != 0 {
		t.Fatal("a store that answered, wrongly, opened the breaker or reached the failure modes")
	}

	r.shared.fail(errDown)
	err = r.store.Check(ctx)
	if !errors.Is(err, core.ErrStoreUnavailable) || errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("an unreachable store: %v", err)
	}
}

// A Check that finds the store unreachable, confirmed by a probe, opens the breaker:
// the first requests are decided in the failure modes, and a key no answer is known
// for gets Local mode's allowance. With the breaker left closed, they were slow calls,
// and Local mode refused every one until traffic had opened it.
func TestCheckOnAnUnreachableStoreOpensTheBreaker(t *testing.T) {
	r := newRig(t)
	r.shared.fail(errDown)
	if err := r.store.Check(context.Background()); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("an unreachable store: %v", err)
	}
	if got := r.store.Breaker(); got != resilient.BreakerOpen {
		t.Fatalf("breaker %v after a failed Check and probe, want open", got)
	}
	if got := admittedOf(t, r, tenPerMinute, "first-client", 12); got != 10 {
		t.Fatalf("a client no answer is known for: %d of 12 admitted, want Local mode's 10", got)
	}
}

// A store that answers with results of the wrong shape fails the check as permanent.
func TestCheckRejectsWrongResults(t *testing.T) {
	r := newRig(t)
	wrong := &wrongResults{fakeShared: r.shared}
	store, err := resilient.New(wrong)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Check(context.Background()); !errors.Is(err, resilient.ErrPermanent) {
		t.Fatalf("wrong results: %v", err)
	}
}

type wrongResults struct{ *fakeShared }

func (w *wrongResults) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := w.fakeShared.Decide(ctx, req)
	res.Limit++
	return res, err
}

// checkDownProbeHangs is a store whose Check calls fail at once (refused) while any
// other call, such as a confirming probe, hangs until its ctx ends.
type checkDownProbeHangs struct {
	*fakeShared
	probes atomic.Int64
}

func (f *checkDownProbeHangs) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if strings.HasPrefix(req.Policy.Name(), "ratelimit-check") {
		return core.Result{}, errDown
	}
	f.probes.Add(1)
	<-ctx.Done()
	return core.Result{}, ctx.Err()
}

// Check's confirming probe stays within Check's ctx: cancelled 50 ms in, Check
// returns then, not after the probe's own bound (five ceilings of the deadline, 5 s
// with a deadline of 250 ms), and a probe it could not finish opens nothing.
func TestCheckHonoursItsCtxWhileConfirming(t *testing.T) {
	for _, d := range []time.Duration{resilient.DefaultDeadline, 250 * time.Millisecond} {
		clock := storetest.NewClock()
		f := &checkDownProbeHangs{fakeShared: newFakeShared(t, clock)}
		r := newRigOver(t, clock, f, resilient.WithDeadline(d))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		err := r.store.Check(ctx)
		if took := time.Since(start); took > time.Second || f.probes.Load() == 0 {
			t.Errorf("deadline %v: Check returned after %v (%d probes) with its ctx cancelled at 50 ms", d, took, f.probes.Load())
		}
		if !errors.Is(err, core.ErrStoreUnavailable) || r.store.Breaker() != resilient.BreakerClosed {
			t.Errorf("deadline %v: %v, breaker %v; want unavailable, and closed (the probe did not finish)", d, err, r.store.Breaker())
		}
	}
}

// Checks repeated through an outage open the breaker once, say it was the start-up
// check (not "failures=0 calls=0": Check's calls are not in the window), and send no
// further probe while it is open.
func TestChecksThroughAnOutageOpenTheBreakerOnce(t *testing.T) {
	r := newRig(t)
	r.shared.fail(errDown)
	if err := r.store.Check(context.Background()); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatal(err)
	}
	calls := r.shared.calls.Load()
	for range 3 {
		if err := r.store.Check(context.Background()); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatal(err)
		}
	}
	if got := r.shared.calls.Load() - calls; got != 3 {
		t.Errorf("3 more Checks with the breaker open made %d calls, want their 3 failing ones and no probe", got)
	}
	log := r.log.String()
	if n := strings.Count(log, "open, next probe"); n != 1 || !strings.Contains(log, "start-up check: shared store unreachable; circuit breaker open") || strings.Contains(log, "failures=0") {
		t.Errorf("%d open lines, want one that names the start-up check:\n%s", n, log)
	}
}

// A Check whose call the client never sent, its in-flight bound being full
// (ErrOverload), learned nothing of the store, and opens nothing.
func TestCheckOfASaturatedClientOpensNothing(t *testing.T) {
	r := newRig(t, resilient.WithMaxInFlight(1), resilient.WithDeadline(testDeadline))
	r.shared.set(nil, true, true) // every call hangs until released: one holds the only slot
	go r.store.Decide(context.Background(), core.Request{Policy: tenPerMinute, Key: "busy"})
	waitFor(t, "a call in flight", func() bool { return r.shared.calls.Load() > 0 })
	if err := r.store.Check(context.Background()); !errors.Is(err, resilient.ErrOverload) {
		t.Fatalf("Check with the in-flight bound full: %v, want ErrOverload", err)
	}
	if got := r.store.Breaker(); got != resilient.BreakerClosed {
		t.Errorf("a saturated client's Check opened the breaker (%v)", got)
	}
}
