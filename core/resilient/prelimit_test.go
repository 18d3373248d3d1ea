package resilient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A key the shared store refused is refused in process, without a call, until its
// Retry-After has passed, and never for longer; cheaper requests still ask the store.
func TestPreLimiterRefusesKnownRefusedKeys(t *testing.T) {
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(1), core.WithBurst(10))
	r := newRig(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		r.decide(t, p, "ak:hot")
	}
	shared, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "ak:hot", Cost: 3})
	if err != nil || shared.Allowed || shared.RetryAfter != 3*time.Second {
		t.Fatalf("the store's refusal: %+v %v", shared, err)
	}
	calls := r.shared.calls.Load()
	r.clock.Advance(time.Second) // one token back: cost 1 would pass, cost 3 would not
	for _, cost := range []int64{3, 4, 10} {
		res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "ak:hot", Cost: cost})
		if err != nil || res.Allowed || res.RetryAfter != 2*time.Second || res.Limit != 10 {
			t.Fatalf("cost %d: %+v %v, want refused locally for the 2s left", cost, res, err)
		}
	}
	if got := r.shared.calls.Load(); got != calls {
		t.Fatalf("%d calls reached the store for a known refused key", got-calls)
	}
	if res := r.decide(t, p, "ak:hot"); !res.Allowed || r.shared.calls.Load() != calls+1 {
		t.Fatalf("cost 1 is below the refused cost and must ask the store: %+v", res)
	}
	if len(r.rec.refusals) != 3 || r.rec.refusals[0].KeyType != "ak" || r.rec.refusals[0].Policy != "api" {
		t.Fatalf("local refusals %+v", r.rec.refusals)
	}
	r.clock.Advance(2 * time.Second) // the store's Retry-After has passed
	if res := r.decide(t, p, "ak:hot"); r.shared.calls.Load() != calls+2 {
		t.Fatalf("after Retry-After the store must decide again: %+v", res)
	}
}

// Concurrency policies are never refused locally: a lease may be released any time.
func TestPreLimiterSkipsConcurrency(t *testing.T) {
	p := core.MustConcurrencyPolicy("export", 1, time.Minute)
	r := newRig(t)
	ctx := context.Background()
	first, _ := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: 1})
	if refused, _ := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: 2}); refused.Allowed || !first.Allowed {
		t.Fatalf("first %+v second %+v", first, refused)
	}
	if err := r.store.Release(ctx, core.Request{Policy: p, Key: "k"}, 1); err != nil {
		t.Fatal(err)
	}
	if res, _ := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: 3}); !res.Allowed {
		t.Fatalf("after release: %+v", res)
	}
	if r.store.PreLimitKeys() != 0 {
		t.Fatal("a concurrency refusal was remembered")
	}
}

// A stack is refused locally when any member is known refused, and nothing is asked.
func TestPreLimiterRefusesStacks(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	results := make([]core.Result, 3)
	for i := 0; i < 3; i++ {
		r.store.DecideStack(ctx, loginStack(fmt.Sprint("user", i)), results)
	}
	if results[2].Allowed || results[2].RetryAfter <= 0 {
		t.Fatalf("the subnet (2 a minute) should refuse the third stack: %+v", results)
	}
	calls := r.shared.calls.Load()
	r.rec.decisions = nil
	allowed, err := r.store.DecideStack(ctx, loginStack("someone-else"), results)
	if allowed || err != nil || r.shared.calls.Load() != calls {
		t.Fatalf("a stack with a known refused subnet: allowed %v, err %v, %d calls", allowed, err, r.shared.calls.Load()-calls)
	}
	if results[2].RetryAfter <= 0 || results[0].RetryAfter != 0 || results[0].Allowed {
		t.Fatalf("results %+v", results)
	}
	want := []string{"login-account:uncharged/prelimit", "login-ip:uncharged/prelimit", "login-subnet:denied/prelimit"}
	if got := r.rec.outcomes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}

// The pre-limiter's memory is bounded, and it can be turned off.
func TestPreLimiterBounded(t *testing.T) {
	p := core.MustPolicy("api", core.FixedWindow, core.PerMinute(1))
	r := newRig(t, resilient.WithPreLimit(32))
	for i := 0; i < 1000; i++ {
		key := fmt.Sprint("ip:10.0.", i/256, ".", i%256)
		r.decide(t, p, key)
		r.decide(t, p, key) // refused by the store, remembered if there is room
	}
	if n := r.store.PreLimitKeys(); n != 32 {
		t.Fatalf("the pre-limiter holds %d keys, want its cap, 32", n)
	}
	r.clock.Advance(time.Minute) // every entry has expired: new refusals replace them
	calls := r.shared.calls.Load()
	for i := 0; i < 1000; i++ {
		key := fmt.Sprint("ip:10.1.", i/256, ".", i%256)
		r.decide(t, p, key)
		r.decide(t, p, key)
		r.decide(t, p, key) // refused locally when remembered
	}
	if n := r.store.PreLimitKeys(); n != 32 {
		t.Fatalf("after expiry the pre-limiter holds %d keys, want 32", n)
	}
	if local := 3000 - (r.shared.calls.Load() - calls); local < 32 {
		t.Fatalf("only %d requests were refused locally after the old entries expired", local)
	}

	off := newRig(t, resilient.WithPreLimit(0))
	off.decide(t, p, "k")
	off.decide(t, p, "k")
	off.decide(t, p, "k")
	if off.shared.calls.Load() != 3 || off.store.PreLimitKeys() != 0 {
		t.Fatalf("with the pre-limiter off: %d calls", off.shared.calls.Load())
	}
}

// A pre-limited key keeps being refused while the store is down, in every mode: the
// store's refusal is still true.
func TestPreLimiterDuringOutage(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open))
	r.decide(t, perMinute5, "k")
	for i := 0; i < 5; i++ {
		r.decide(t, perMinute5, "k")
	}
	r.shared.fail(errDown)
	if res := r.decide(t, perMinute5, "k"); res.Allowed || res.Unenforced {
		t.Fatalf("a known refused key during an outage in open mode: %+v", res)
	}
	if res := r.decide(t, perMinute5, "other"); !res.Allowed || !res.Unenforced {
		t.Fatalf("another key in open mode: %+v", res)
	}
}

// When the pre-limiter refuses a stack, every member reports what the shared store
// last said of it, as a store reports the members of a refused stack: the IP policy
// that admitted two stacks has its remaining left, not 0.
func TestPreLimiterReportsEveryMemberTruthfully(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	results := make([]core.Result, 3)
	for i := 0; i < 3; i++ {
		r.store.DecideStack(ctx, loginStack(fmt.Sprint("user", i)), results)
	}
	shared := append([]core.Result(nil), results...) // the shared store's refusal of the third
	if shared[2].Allowed || shared[1].Remaining <= 0 {
		t.Fatalf("the subnet should refuse the third stack, the IP have some left: %+v", shared)
	}
	calls := r.shared.calls.Load()
	reqs := loginStack("user0") // an account the shared store answered for
	if allowed, err := r.store.DecideStack(ctx, reqs, results); allowed || err != nil || r.shared.calls.Load() != calls {
		t.Fatalf("pre-limited stack: allowed %v, err %v, %d calls", allowed, err, r.shared.calls.Load()-calls)
	}
	for i := range results {
		if results[i].Policy != reqs[i].Policy.Name() || results[i].Limit != reqs[i].Policy.Capacity() {
			t.Fatalf("member %d: %+v", i, results[i])
		}
	}
	if results[1].Remaining != shared[1].Remaining || results[1].RetryAfter != 0 || results[1].Allowed {
		t.Fatalf("the IP policy reports %+v, want its last shared remaining %d, not refusing", results[1], shared[1].Remaining)
	}
	if results[0].Remaining != account.Capacity()-1 { // user0's one admitted stack
		t.Fatalf("the account policy reports remaining %d, want %d", results[0].Remaining, account.Capacity()-1)
	}
}
