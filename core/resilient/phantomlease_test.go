package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// A concurrency decision whose call to the shared store fails after the lease
// landed there (the script ran, its reply came past the deadline or was lost, or
// the caller cancelled meanwhile) leaves a phantom of the lease on the shared
// store. The request is then decided without it: Local mode grants the lease in
// the local store, Open mode unenforced, and the request's release went where it
// was granted only; Closed mode and a cancelled caller got an error and released
// nothing. Either way the phantom held a slot on the shared store for its lease
// timeout after the request had ended. These tests count the slots the shared
// store holds while the request runs and after it ended.

// uploads is a concurrency policy of 4 leases: room for sharedHeld to count a
// phantom beside the leases of running requests.
var uploads = core.MustConcurrencyPolicy("uploads", 4, time.Minute)

func upload(lease uint64) core.Request { return core.Request{Policy: uploads, Key: "k", Lease: lease} }

// uploadStack is a stack of upload(lease) and a rate policy on the same key.
func uploadStack(lease uint64) []core.Request {
	return []core.Request{upload(lease), {Policy: perMinute5, Key: "k"}}
}

// errReplyLost is the failure of a call whose script ran but whose reply did not
// come back in time.
var errReplyLost = fmt.Errorf("fake: reply lost: %w", context.DeadlineExceeded)

// landsThenFails is a shared store whose armed decisions, single or stacks, are
// applied and then fail with errReplyLost: the store holds what they acquired and
// the caller does not know it. While releasesFail is set, its releases fail.
type landsThenFails struct {
	*fakeShared
	armed        atomic.Int64 // how many of the next decisions land and then fail
	releasesFail atomic.Bool
	releases     atomic.Int64 // Release calls, failed or not
}

// lands takes one of the armed failures for a decision of policy (probes are never
// failed).
func (l *landsThenFails) lands(policy string) bool {
	for policy != resilient.ProbePolicy.Name() {
		n := l.armed.Load()
		if n <= 0 {
			return false
		}
		if l.armed.CompareAndSwap(n, n-1) {
			return true
		}
	}
	return false
}

func (l *landsThenFails) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := l.fakeShared.Decide(ctx, req)
	if err == nil && l.lands(req.Policy.Name()) {
		return core.Result{}, errReplyLost
	}
	return res, err
}

func (l *landsThenFails) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	allowed, err := l.fakeShared.DecideStack(ctx, reqs, results)
	if err == nil && l.lands(reqs[0].Policy.Name()) {
		return false, errReplyLost
	}
	return allowed, err
}

func (l *landsThenFails) Release(ctx context.Context, req core.Request, lease uint64) error {
	l.releases.Add(1)
	if l.releasesFail.Load() {
		l.calls.Add(1)
		return errDown
	}
	return l.fakeShared.Release(ctx, req, lease)
}

// phantomRig is a rig over a landsThenFails store whose breakers stay closed, so
// that each failed call is decided as a slow one, and whose release passes the test
// makes (ReleasePass).
func phantomRig(t *testing.T, options ...resilient.Option) (*rig, *landsThenFails) {
	t.Helper()
	clock := storetest.NewClock()
	shared := &landsThenFails{fakeShared: newFakeShared(t, clock)}
	base := []resilient.Option{neverOpen, resilient.WithFailureRate(0.5, 100, time.Minute)}
	r := newRigOver(t, clock, shared, append(base, options...)...)
	r.shared = shared.fakeShared
	r.store.ReleasePassesByHand()
	return r, shared
}

// sharedHeld is how many of the 4 slots of uploads' key k the shared store holds:
// the leases of running requests, and phantoms.
func sharedHeld(t *testing.T, r *rig) int64 { return slotsHeld(t, r.shared.mem) }

// slotsHeld is how many of the 4 slots of uploads' key k store holds.
func slotsHeld(t *testing.T, store core.Store) int64 {
	t.Helper()
	ctx := context.Background()
	const probe = 1 << 40
	res, err := store.Decide(ctx, upload(probe))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Allowed {
		return uploads.Limit()
	}
	if err := store.Release(ctx, upload(probe), probe); err != nil {
		t.Fatal(err)
	}
	return res.Limit - res.Remaining - 1
}

// admit fails t unless r's store grants lease, when.
func admit(t *testing.T, r *rig, lease uint64, when string) {
	t.Helper()
	if res, err := r.store.Decide(context.Background(), upload(lease)); err != nil || !res.Allowed {
		t.Fatalf("%s: lease %d: %+v, %v; want it granted", when, lease, res, err)
	}
}

// endUploads releases leases, as their requests end, and makes a release pass.
func endUploads(t *testing.T, r *rig, leases ...uint64) {
	t.Helper()
	for _, lease := range leases {
		if err := r.store.Release(context.Background(), upload(lease), lease); err != nil {
			t.Fatal(err)
		}
	}
	r.store.ReleasePass()
}

// lateReplies makes r's shared store hold each decision's reply, once it is
// applied, until the returned function is called; hook runs first (nil: none).
func lateReplies(r *rig, hook func()) (release func()) {
	gate := make(chan struct{})
	r.shared.mu.Lock()
	r.shared.afterDecide = func() {
		if hook != nil {
			hook()
		}
		<-gate
	}
	r.shared.mu.Unlock()
	return func() {
		r.shared.mu.Lock()
		r.shared.afterDecide = nil
		r.shared.mu.Unlock()
		close(gate)
	}
}

// wantHeld fails t unless the shared store holds want slots of uploads' key k.
func wantHeld(t *testing.T, r *rig, want int64, when string) {
	t.Helper()
	if got := sharedHeld(t, r); got != want {
		t.Errorf("%s: the shared store holds %d slots; want %d", when, got, want)
	}
}

// A lease whose acquire timed out after it landed is granted in Local mode; the
// shared store holds its phantom while the request runs, and nothing once the
// request released it: the release went to the local store only, and the phantom
// held the slot for the lease timeout (2 timed-out requests kept a key of 2 full
// with nothing in flight).
func TestTimedOutAcquireLeavesNoPhantom(t *testing.T) {
	r := newRig(t, neverOpen, resilient.WithDeadline(testDeadline))
	r.store.ReleasePassesByHand()
	ctx := context.Background()
	reply := lateReplies(r, nil) // the lease landed; the reply is late
	res, err := r.store.Decide(ctx, upload(1))
	reply()
	if err != nil || !res.Allowed {
		t.Fatalf("slow acquire in Local mode: %+v, %v; want a local lease", res, err)
	}
	waitFor(t, "the late call to end", func() bool { return r.shared.finished.Load() >= 1 })
	wantHeld(t, r, 1, "lease 1 running")
	r.store.ReleasePass()
	wantHeld(t, r, 1, "lease 1 running, after a release pass")
	if err := r.store.Release(ctx, upload(1), 1); err != nil {
		t.Fatal(err)
	}
	r.store.ReleasePass()
	wantHeld(t, r, 0, "lease 1 ended")
}

// Each failure mode, for a single request and for a stack with a concurrency member,
// after a call that landed and failed: a lease granted (Local, Open) keeps its
// phantom while its request runs and loses it once it ends; a lease refused (a Local
// stack, whose concurrency member is not decided from a last answer) or failed
// closed loses it at once.
func TestFailedAcquireReleasesItsPhantom(t *testing.T) {
	for _, mode := range []resilient.Mode{resilient.Local, resilient.Open, resilient.Closed} {
		for _, stack := range []bool{false, true} {
			name := string(mode) + "/single"
			if stack {
				name = string(mode) + "/stack"
			}
			t.Run(name, func(t *testing.T) {
				r, shared := phantomRig(t, resilient.WithMode(mode))
				ctx := context.Background()
				shared.armed.Store(1)
				var granted bool
				var err error
				if stack {
					granted, err = r.store.DecideStack(ctx, uploadStack(1), make([]core.Result, 2))
				} else {
					var res core.Result
					res, err = r.store.Decide(ctx, upload(1))
					granted = res.Allowed
				}
				wantGranted := mode == resilient.Open || mode == resilient.Local && !stack
				if granted != wantGranted || (err != nil) != (mode == resilient.Closed) {
					t.Fatalf("failed call: granted %v, %v; want granted %v", granted, err, wantGranted)
				}
				if granted {
					r.store.ReleasePass()
					wantHeld(t, r, 1, "lease 1 running")
					if err := r.store.Release(ctx, upload(1), 1); err != nil {
						t.Fatal(err)
					}
				}
				r.store.ReleasePass()
				wantHeld(t, r, 0, "lease 1 ended")
				if n := r.store.EndedLeases(); n != 0 {
					t.Errorf("%d ended leases left in the book", n)
				}
			})
		}
	}
}

// A caller that cancels while its acquire is on its way gets the context's error,
// and the lease, which landed, is released on the shared store.
func TestCancelledAcquireReleasesItsPhantom(t *testing.T) {
	for _, stack := range []bool{false, true} {
		t.Run(fmt.Sprintf("stack=%v", stack), func(t *testing.T) {
			r, _ := phantomRig(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reply := lateReplies(r, cancel) // landed; the caller gives up
			var err error
			if stack {
				_, err = r.store.DecideStack(ctx, uploadStack(1), make([]core.Result, 2))
			} else {
				_, err = r.store.Decide(ctx, upload(1))
			}
			reply()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled acquire: %v; want context.Canceled", err)
			}
			waitFor(t, "the late call to end", func() bool { return r.shared.finished.Load() >= 1 })
			r.store.ReleasePass()
			wantHeld(t, r, 0, "lease 1 cancelled")
		})
	}
}

// A local lease whose phantom is on the shared store is handed over once: the
// hand-over acquires it under its ID, which holds the phantom's slot once, and one
// release at its end frees it. Acquired beside it, the lease was held twice while
// its request ran, and the phantom stayed after it ended. The shared store never
// loses the lease of the running request either.
func TestHandOverHoldsTheLeaseOnceBesideItsPhantom(t *testing.T) {
	r, shared := phantomRig(t)
	shared.armed.Store(1)
	admit(t, r, 1, "failed call in Local mode")
	wantHeld(t, r, 1, "lease 1 running locally, its phantom on the shared store")
	// The store answers again: lease 2's decision hands lease 1 over first.
	calls := r.shared.calls.Load()
	admit(t, r, 2, "lease 2")
	if got := r.shared.calls.Load() - calls; got != 2 {
		t.Errorf("lease 2's decision made %d calls; want 2, lease 1's hand-over and its own", got)
	}
	wantHeld(t, r, 2, "leases 1 (handed over) and 2 running")
	endUploads(t, r, 2)
	wantHeld(t, r, 1, "lease 1 running")
	endUploads(t, r, 1)
	wantHeld(t, r, 0, "every lease ended")
}

// A hand-over whose acquire lands and fails leaves the lease local, and a phantom
// of it: the next hand-over holds it once too.
func TestHandOverWhoseAcquireFailsLeavesNoPhantom(t *testing.T) {
	r, shared := phantomRig(t)
	shared.armed.Store(1)
	admit(t, r, 1, "failed call in Local mode")
	shared.armed.Store(1) // lease 1's hand-over, at lease 2's decision
	admit(t, r, 2, "failed hand-over")
	wantHeld(t, r, 1, "leases 1 and 2 running locally, lease 1's phantom on the shared store")
	admit(t, r, 3, "lease 3")
	wantHeld(t, r, 3, "leases 1, 2 (handed over) and 3 running")
	endUploads(t, r, 1, 2, 3)
	wantHeld(t, r, 0, "every lease ended")
}

// A hand-over releases nothing while the lease's request runs, not even its
// phantom: a release that reached the store late, after the hand-over's acquire,
// would free the slot of a running request. With every release failing, the
// hand-over still succeeds, and the store holds each running lease once.
func TestHandOverReleasesNothingOfARunningRequest(t *testing.T) {
	r, shared := phantomRig(t)
	shared.armed.Store(1)
	admit(t, r, 1, "failed call in Local mode")
	shared.releasesFail.Store(true)
	calls := r.shared.calls.Load()
	admit(t, r, 2, "lease 2, after lease 1's hand-over")
	if got := r.shared.calls.Load() - calls; got != 2 {
		t.Errorf("lease 2's decision made %d calls; want 2, lease 1's hand-over and its own", got)
	}
	wantHeld(t, r, 2, "leases 1 (handed over) and 2 running")
	if got := shared.releases.Load(); got != 0 {
		t.Errorf("the shared store was asked %d releases while every request ran; want none", got)
	}
	shared.releasesFail.Store(false)
	endUploads(t, r, 1, 2)
	wantHeld(t, r, 0, "every lease ended")
}
