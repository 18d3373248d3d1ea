package memory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestFloodOfNewKeysNeverUnlocksAnAccount is the attack on the key cap: alice's
// account is locked (5 per minute, all spent), then 5,000 new keys arrive with
// WithMaxKeys(1000). The cap used to evict the entry closest to recovery, often
// alice's, and unlock her. An entry that still restricts its key is never evicted.
func TestFloodOfNewKeysNeverUnlocksAnAccount(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(1000))
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	alice := core.Request{Policy: account, Key: "form:username:alice"}
	for range 5 {
		mustDecide(t, store, alice)
	}
	if mustDecide(t, store, alice).Allowed {
		t.Fatal("alice is not locked after 5 attempts")
	}
	for i := range 5000 {
		mustDecide(t, store, core.Request{Policy: account, Key: fmt.Sprintf("form:username:user%05d", i)})
		clock.Advance(time.Millisecond)
	}
	if res := mustDecide(t, store, alice); res.Allowed {
		t.Fatalf("5,000 new keys unlocked alice (stats %+v)", store.Stats())
	}
	st := store.Stats()
	if st.Keys > 1000 || st.Overflowed == 0 {
		t.Fatalf("stats %+v: want at most 1000 keys and the flood decided against the overflow entry", st)
	}
	t.Logf("after the flood: %+v", st)
}

// TestOverflowBucketIsSharedAndCounted checks that, with every shard full of keys
// that still restrict their clients, new keys share the policy's overflow entry:
// a flood of new keys is limited as one client, and every such decision is counted.
func TestOverflowBucketIsSharedAndCounted(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(4), memory.WithShards(1))
	p := core.MustPolicy("api", core.FixedWindow, core.PerMinute(3))
	for i := range 4 {
		mustDecide(t, store, core.Request{Policy: p, Key: fmt.Sprint("held", i)})
	}
	admitted := 0
	for i := range 10 {
		if mustDecide(t, store, core.Request{Policy: p, Key: fmt.Sprint("new", i)}).Allowed {
			admitted++
		}
	}
	if admitted != 3 {
		t.Fatalf("10 new keys in a full store: %d admitted, want the overflow entry's 3", admitted)
	}
	if st := store.Stats(); st.Overflowed != 10 || st.Keys != 4 || st.EvictedEarly != 0 {
		t.Fatalf("stats %+v, want 10 overflowed decisions and the 4 held keys", st)
	}
	// Once the held keys recover, new keys get entries of their own again.
	clock.Advance(time.Minute)
	if !mustDecide(t, store, core.Request{Policy: p, Key: "later"}).Allowed {
		t.Fatal("a new key after recovery was refused")
	}
	if st := store.Stats(); st.Overflowed != 10 || st.EvictedEarly != 1 {
		t.Fatalf("stats %+v: want a recovered key evicted for the new one", st)
	}
}

// TestRefusedStackCreatesNoEntries is the attack of refused logins: each used to
// create an entry for its (new) account name although nothing was charged.
func TestRefusedStackCreatesNoEntries(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock)
	account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	ip := core.MustPolicy("login-ip", core.SlidingLog, core.PerMinute(20))
	results := make([]core.Result, 2)
	stack := func(user string) []core.Request {
		return []core.Request{{Policy: account, Key: "form:username:" + user}, {Policy: ip, Key: "ip:203.0.113.9"}}
	}
	for i := range 20 {
		if ok, err := store.DecideStack(context.Background(), stack(fmt.Sprint("u", i)), results); err != nil || !ok {
			t.Fatalf("login %d: %v, %v", i, ok, err)
		}
	}
	before := store.Stats().Keys
	for i := range 20_000 {
		ok, err := store.DecideStack(context.Background(), stack(fmt.Sprint("guess", i)), results)
		if err != nil || ok {
			t.Fatalf("refused login %d: %v, %v", i, ok, err)
		}
		if results[1].Allowed || results[0].Remaining != 5 {
			t.Fatalf("refused login %d: results %+v, want the IP refusing and the account untouched", i, results)
		}
	}
	if after := store.Stats().Keys; after != before {
		t.Fatalf("20,000 refused logins grew the store from %d to %d keys", before, after)
	}
	// An admitted stack still creates its entries.
	clock.Advance(time.Minute)
	if ok, _ := store.DecideStack(context.Background(), stack("newcomer"), results); !ok {
		t.Fatal("a login after the IP recovered was refused")
	}
	if after := store.Stats().Keys; after != before+1 {
		t.Fatalf("an admitted login with a new account: %d keys, want %d", after, before+1)
	}
}

// TestCancelledContextIsHonoured checks core.Store's contract: a cancelled or
// expired context is returned as ctx.Err(), wrapped, and nothing is decided.
func TestCancelledContextIsHonoured(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock)
	p := core.MustPolicy("p", core.FixedWindow, core.PerMinute(1))
	c := core.MustConcurrencyPolicy("c", 1, time.Minute)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	for name, tc := range map[string]struct {
		ctx  context.Context
		want error
	}{"cancelled": {cancelled, context.Canceled}, "expired": {expired, context.DeadlineExceeded}} {
		t.Run(name, func(t *testing.T) {
			req := core.Request{Policy: p, Key: "k"}
			if _, err := store.Decide(tc.ctx, req); !errors.Is(err, tc.want) {
				t.Errorf("Decide: %v, want %v", err, tc.want)
			}
			results := make([]core.Result, 2)
			stack := []core.Request{req, {Policy: core.MustPolicy("q", core.FixedWindow, core.PerMinute(1)), Key: "k"}}
			if _, err := store.DecideStack(tc.ctx, stack, results); !errors.Is(err, tc.want) {
				t.Errorf("DecideStack: %v, want %v", err, tc.want)
			}
			if err := store.Release(tc.ctx, core.Request{Policy: c, Key: "k"}, 1); !errors.Is(err, tc.want) {
				t.Errorf("Release: %v, want %v", err, tc.want)
			}
			if err := store.Refund(tc.ctx, req, clock.Now()); !errors.Is(err, tc.want) {
				t.Errorf("Refund: %v, want %v", err, tc.want)
			}
			if st := store.Stats(); st.Keys != 0 {
				t.Errorf("a cancelled call created %d keys", st.Keys)
			}
		})
	}
	// The budget is untouched.
	if !mustDecide(t, store, core.Request{Policy: p, Key: "k"}).Allowed {
		t.Fatal("a cancelled decision spent the budget")
	}
}

// TestOverflowLeaseIsReleased checks that a concurrency lease taken from the
// overflow entry goes back there when released.
func TestOverflowLeaseIsReleased(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(1), memory.WithShards(1))
	hold := core.MustPolicy("hold", core.FixedWindow, core.PerMinute(1))
	c := core.MustConcurrencyPolicy("c", 1, time.Hour)
	mustDecide(t, store, core.Request{Policy: hold, Key: "held"})
	first := mustDecide(t, store, core.Request{Policy: c, Key: "a", Lease: 1})
	if !first.Allowed || store.Stats().Overflowed != 1 {
		t.Fatalf("first lease %+v, stats %+v", first, store.Stats())
	}
	if mustDecide(t, store, core.Request{Policy: c, Key: "b", Lease: 2}).Allowed {
		t.Fatal("the overflow entry's one slot was given twice")
	}
	if err := store.Release(context.Background(), core.Request{Policy: c, Key: "a"}, first.Lease); err != nil {
		t.Fatal(err)
	}
	if !mustDecide(t, store, core.Request{Policy: c, Key: "b", Lease: 3}).Allowed {
		t.Fatal("the released overflow lease was not given back")
	}
}

// TestStacksUnderKeyPressure checks the key count through admitted and refused
// stacks of new keys, with and without room: a stack's new keys take entries only
// when it is admitted, and in a full store they share the overflow entries.
func TestStacksUnderKeyPressure(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(6), memory.WithShards(1))
	a := core.MustPolicy("a", core.FixedWindow, core.PerMinute(2))
	b := core.MustPolicy("b", core.FixedWindow, core.PerMinute(100))
	results := make([]core.Result, 2)
	decide := func(ka, kb string) bool {
		ok, err := store.DecideStack(context.Background(), []core.Request{{Policy: a, Key: ka}, {Policy: b, Key: kb}}, results)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range 3 { // 6 entries: the store is full
		if !decide(fmt.Sprint("a", i), fmt.Sprint("b", i)) {
			t.Fatalf("stack %d refused", i)
		}
	}
	if st := store.Stats(); st.Keys != 6 {
		t.Fatalf("stats %+v, want 6 keys", st)
	}
	// New keys now share the overflow entries: a's admits 2.
	admitted := 0
	for i := range 5 {
		if decide(fmt.Sprint("new-a", i), fmt.Sprint("new-b", i)) {
			admitted++
		}
	}
	if st := store.Stats(); admitted != 2 || st.Keys != 6 || st.Overflowed != 10 {
		t.Fatalf("%d admitted, stats %+v; want 2 admitted by the overflow entry, 6 keys, 10 overflowed", admitted, st)
	}
	// After recovery, an admitted stack takes entries again, and the count holds.
	clock.Advance(time.Minute)
	if !decide("late-a", "late-b") {
		t.Fatal("a stack after recovery was refused")
	}
	if st := store.Stats(); st.Keys != 6 || st.EvictedEarly != 2 {
		t.Fatalf("stats %+v, want 6 keys with 2 recovered ones evicted", st)
	}
	if n := store.Sweep(); n != 4 {
		t.Fatalf("swept %d, want the 4 recovered entries", n)
	}
	if st := store.Stats(); st.Keys != 2 {
		t.Fatalf("stats %+v after the sweep, want the 2 live keys", st)
	}
}

// TestOverflowLeaseIsReleasedAfterItsKeyGotAnEntry checks that a lease taken from
// the overflow entry goes back there even when its key has had an entry of its own
// since (room was made once the held key recovered). The release used to look only
// in the key's entry, so the overflow entry held the lease until its timeout (an
// hour here), refusing every new key in a full store for that long.
func TestOverflowLeaseIsReleasedAfterItsKeyGotAnEntry(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(1), memory.WithShards(1))
	hold := core.MustPolicy("hold", core.FixedWindow, core.PerMinute(1))
	c := core.MustConcurrencyPolicy("c", 1, time.Hour)
	mustDecide(t, store, core.Request{Policy: hold, Key: "held"})
	if res := mustDecide(t, store, core.Request{Policy: c, Key: "a", Lease: 1}); !res.Allowed || store.Stats().Overflowed != 1 {
		t.Fatalf("lease 1 %+v, stats %+v; want it from the overflow entry", res, store.Stats())
	}
	clock.Advance(time.Minute) // "held" recovers: "a" gets an entry of its own
	if res := mustDecide(t, store, core.Request{Policy: c, Key: "a", Lease: 2}); !res.Allowed || store.Stats().Overflowed != 1 {
		t.Fatalf("lease 2 %+v, stats %+v; want it from a's own entry", res, store.Stats())
	}
	if err := store.Release(context.Background(), core.Request{Policy: c, Key: "a"}, 1); err != nil {
		t.Fatal(err)
	}
	// "a" holds its entry (lease 2): "b" is decided against the overflow entry.
	if res := mustDecide(t, store, core.Request{Policy: c, Key: "b", Lease: 3}); !res.Allowed {
		t.Fatalf("b after lease 1 was released: %+v, stats %+v; want admitted by the overflow entry", res, store.Stats())
	}
}

// TestRefundOfAnOverflowChargeIsNotGivenToTheKeysLaterEntry: a key decided against
// the overflow entry while its shard was full, which then gets an entry of its own
// (a slot recovered) and spends its limit there, is refunded the overflow charge.
// Refund used to give it to the key's own entry, which never counted it: fixed and
// sliding windows admitted 3 in one window of limit 2, buckets a token they never
// spent. The refund now gives nothing back, and a refund of a charge on the entry
// itself still does.
func TestRefundOfAnOverflowChargeIsNotGivenToTheKeysLaterEntry(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.SlidingLog, core.TokenBucket, core.GCRA} {
		for _, viaStack := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stack=%v", alg, viaStack), func(t *testing.T) {
				clock := storetest.NewClock()
				clock.Set(clock.Millis() - clock.Millis()%60_000 + 1_000) // 1s into a minute window
				store := newTestStore(t, clock, memory.WithShards(1), memory.WithMaxKeys(1))
				filler := core.MustPolicy("filler", core.TokenBucket, core.PerSecond(1))
				login := core.MustPolicy("login", alg, core.PerMinute(2))
				k := core.Request{Policy: login, Key: "attacker"}
				decide := func() core.Result {
					if !viaStack {
						return mustDecide(t, store, k)
					}
					results := make([]core.Result, 1)
					if _, err := store.DecideStack(context.Background(), []core.Request{k}, results); err != nil {
						t.Fatal(err)
					}
					return results[0]
				}
				refund := func(chargedAt time.Time) {
					if err := store.Refund(context.Background(), k, chargedAt); err != nil {
						t.Fatal(err)
					}
				}
				mustDecide(t, store, core.Request{Policy: filler, Key: "someone"}) // the one slot, restricted for 1s
				overflowed := decide()
				if !overflowed.Allowed || store.Stats().Overflowed != 1 {
					t.Fatalf("setup: %+v, stats %+v", overflowed, store.Stats())
				}
				clock.Advance(2 * time.Second) // the filler recovers; the same minute window
				var own core.Result
				for range 2 {
					if own = decide(); !own.Allowed {
						t.Fatalf("the key's own entry refused %+v (stats %+v)", own, store.Stats())
					}
				}
				if store.Stats().Keys != 1 {
					t.Fatalf("setup: the key has no entry of its own: %+v", store.Stats())
				}
				refund(overflowed.DecidedAt) // the overflowed request's work was not done
				if res := decide(); res.Allowed {
					t.Fatalf("the refund of an overflow charge let the key's own entry admit a third request in a window of 2: %+v", res)
				}
				refund(own.DecidedAt)
				if res := decide(); !res.Allowed {
					t.Fatalf("the refund of a charge on the key's own entry gave nothing back: %+v", res)
				}
			})
		}
	}
}
