package resilient_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// memberCalls is a shared store that counts the calls it receives for the policies of
// one stack (members), and, when armed, holds the first of them until the test lets
// it go on: the test acts while that call is on its way.
type memberCalls struct {
	*fakeShared
	members []string
	calls   atomic.Int64

	hold    atomic.Bool   // the next member call waits for goOn, after closing held
	held    chan struct{} // closed when the held call has reached the store
	goOn    chan struct{} // closed by the test
	holding atomic.Bool   // a call has been held already
}

// arrived counts a call of policy p, and holds it when armed.
func (m *memberCalls) arrived(p core.Policy) {
	if !slices.Contains(m.members, p.Name()) {
		return
	}
	m.calls.Add(1)
	if m.hold.Load() && m.holding.CompareAndSwap(false, true) {
		close(m.held)
		<-m.goOn
	}
}

func (m *memberCalls) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	m.arrived(req.Policy)
	return m.fakeShared.Decide(ctx, req)
}

func (m *memberCalls) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	m.arrived(reqs[0].Policy)
	return m.fakeShared.DecideStack(ctx, reqs, results)
}

func (m *memberCalls) Release(ctx context.Context, req core.Request, lease uint64) error {
	m.arrived(req.Policy)
	return m.fakeShared.Release(ctx, req, lease)
}

// stackOfLeases is a rig over a memberCalls store whose stack holds three
// concurrency policies of limit each. Local mode granted every member two leases on
// its key (stacks 1 and 2), whose requests still run; the shared store, which never
// saw them, is back, and the stack's next decision hands them over first, member by
// member. stack(lease) is the stack's request for that lease.
func stackOfLeases(t *testing.T, limit int64) (r *rig, shared *memberCalls, stack func(lease uint64) []core.Request) {
	t.Helper()
	var policies []core.Policy
	for _, name := range []string{"export-a", "export-b", "export-c"} {
		policies = append(policies, core.MustConcurrencyPolicy(name, limit, time.Minute))
	}
	stack = func(lease uint64) []core.Request {
		reqs := make([]core.Request, len(policies))
		for i, p := range policies {
			reqs[i] = core.Request{Policy: p, Key: "k", Lease: lease}
		}
		return reqs
	}
	clock := storetest.NewClock()
	shared = &memberCalls{fakeShared: newFakeShared(t, clock), members: []string{"export-a", "export-b", "export-c"},
		held: make(chan struct{}), goOn: make(chan struct{})}
	r = newRigOver(t, clock, shared)
	t.Cleanup(func() { // before the Store's Close, which waits for the held call
		if shared.holding.Load() {
			select {
			case <-shared.goOn:
			default:
				close(shared.goOn)
			}
		}
	})
	r.shared = shared.fakeShared
	r.trip(t, perMinute5)
	for lease := uint64(1); lease <= 2; lease++ {
		if allowed, err := r.store.DecideStack(context.Background(), stack(lease), make([]core.Result, len(policies))); err != nil || !allowed {
			t.Fatalf("local mode: stack %d: %v, %v; want admitted", lease, allowed, err)
		}
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool {
		return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export-a") && !r.store.Fallback("export-b") && !r.store.Fallback("export-c")
	})
	return r, shared, stack
}

// stackDecisions lists the outcomes of the stack's policies that the recorder holds
// from the index from on.
func stackDecisions(r *rig, from int) []string {
	var out []string
	for _, o := range r.rec.outcomes()[from:] {
		if strings.HasPrefix(o, "export-") {
			out = append(out, o)
		}
	}
	return out
}

// A stack's hand-overs end at its first failed hand-over: every member's hand-over
// waits for the store, and a stack of n concurrency members against a store that
// stopped answering waited n deadlines. Here the store fails at once, and the
// calls it receives are counted: one, the first member's first lease. The stack is
// then decided without the store, where its leases are held: the failure left the
// breaker closed (one slow call), so from the members' last answers, which a
// concurrency limit never continues: refused, nothing charged. Back on the shared
// store, the hand-overs the failure skipped are made, and the leases of every member
// still count: 2 in flight of 2. The failed hand-over's lease may have reached the
// store before it failed: acquired there again under its ID, it is held once.
func TestStackHandOversEndAtTheFirstFailure(t *testing.T) {
	r, shared, stack := stackOfLeases(t, 2)
	ctx := context.Background()
	r.shared.fail(errDown)
	before, from := shared.calls.Load(), len(r.rec.outcomes())
	results := make([]core.Result, 3)
	allowed, err := r.store.DecideStack(ctx, stack(3), results)
	if calls := shared.calls.Load() - before; calls != 1 {
		t.Errorf("the stack's first hand-over failed: the shared store received %d calls for the stack, want 1", calls)
	}
	if err != nil || allowed {
		t.Fatalf("2 leases in flight of 2 on every member, their hand-over failed: %v, %v; want refused", allowed, err)
	}
	if r.store.Breaker() != resilient.BreakerClosed {
		t.Fatalf("one failed call: the breaker is %v, want closed (a slow call)", r.store.Breaker())
	}
	for i, res := range results {
		if res.Allowed || res.RetryAfter <= 0 {
			t.Errorf("member %d: %+v; want refused with a Retry-After", i, res)
		}
	}
	want := []string{"export-a:denied/last-shared", "export-b:denied/last-shared", "export-c:denied/last-shared"}
	if got := stackDecisions(r, from); !slices.Equal(got, want) {
		t.Errorf("decisions %v, want %v", got, want)
	}

	r.shared.heal()
	before = shared.calls.Load()
	if allowed, err := r.store.DecideStack(ctx, stack(4), results); err != nil || allowed {
		t.Fatalf("back, every member's 2 leases handed over: %v, %v; want refused", allowed, err)
	}
	// 2 hand-overs per member, then the stack's own call.
	if calls := shared.calls.Load() - before; calls != 7 {
		t.Errorf("back: the shared store received %d calls for the stack, want 7 (6 hand-overs and the decision)", calls)
	}
	for lease := uint64(1); lease <= 2; lease++ {
		for _, req := range stack(lease) {
			if err := r.store.Release(ctx, req, lease); err != nil {
				t.Fatal(err)
			}
		}
	}
	for lease := uint64(5); lease <= 6; lease++ {
		if allowed, err := r.store.DecideStack(ctx, stack(lease), results); err != nil || !allowed {
			t.Fatalf("every lease ended: stack %d: %v, %v; want admitted", lease, allowed, err)
		}
	}
}

// When the first failed hand-over is the outage itself (the breaker opens while its
// call is on its way), the stack is decided at once in Local mode, where the
// members' leases are held: with 2 in flight of 3 on every member, it is admitted
// once and then refused, and the other members' hand-overs never call the store.
func TestStackWhoseHandOverMeetsTheOutageIsDecidedLocally(t *testing.T) {
	r, shared, stack := stackOfLeases(t, 3)
	ctx := context.Background()
	r.shared.fail(errDown)
	shared.hold.Store(true)
	before, from := shared.calls.Load(), len(r.rec.outcomes())
	type answer struct {
		allowed bool
		err     error
	}
	answers := make(chan answer, 1)
	results := make([]core.Result, 3)
	go func() {
		allowed, err := r.store.DecideStack(ctx, stack(3), results)
		answers <- answer{allowed, err}
	}()
	<-shared.held
	tripBreaker(t, r.store, perMinute5)
	close(shared.goOn)
	a := <-answers
	if calls := shared.calls.Load() - before; calls != 1 {
		t.Errorf("the stack's first hand-over failed: the shared store received %d calls for the stack, want 1", calls)
	}
	if a.err != nil || !a.allowed {
		t.Fatalf("Local mode, 2 leases in flight of 3 on every member: %v, %v; want admitted", a.allowed, a.err)
	}
	for i, res := range results {
		if !res.Allowed || res.Unenforced || res.Lease != 3 {
			t.Errorf("member %d: %+v; want lease 3 admitted in the local store", i, res)
		}
	}
	for lease := uint64(4); lease <= 5; lease++ {
		if allowed, err := r.store.DecideStack(ctx, stack(lease), results); err != nil || allowed {
			t.Fatalf("Local mode, 3 leases in flight of 3 on every member: stack %d: %v, %v; want refused", lease, allowed, err)
		}
	}
	if calls := shared.calls.Load() - before; calls != 1 {
		t.Errorf("the breaker open: the shared store received %d calls for the stack, want 1 in all", calls)
	}
	var want []string
	for _, outcome := range []string{"allowed", "denied", "denied"} {
		for _, member := range []string{"a", "b", "c"} {
			want = append(want, fmt.Sprintf("export-%s:%s/local", member, outcome))
		}
	}
	if got := stackDecisions(r, from); !slices.Equal(got, want) {
		t.Errorf("decisions %v, want %v", got, want)
	}
}
