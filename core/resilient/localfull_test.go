package resilient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// newFullLocalRig is a rig whose local store holds at most keys keys, in one shard,
// without a janitor: the test fills it with keys that still restrict their clients.
func newFullLocalRig(t *testing.T, keys int) (*rig, *memory.Store) {
	t.Helper()
	clock := storetest.NewClock()
	shared := newFakeShared(t, clock)
	local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(keys), memory.WithShards(1))
	if err != nil {
		t.Fatal(err)
	}
	r := newRigOver(t, clock, shared, resilient.WithLocalStore(local))
	r.shared = shared
	return r, local
}

// fillLocal decides new keys of p in Local mode until the local store holds keys
// keys, each of which then still restricts its client (one unit spent).
func fillLocal(t *testing.T, r *rig, local *memory.Store, p core.Policy, keys int) {
	t.Helper()
	for i := 0; local.Stats().Keys < keys; i++ {
		if i == 10*keys {
			t.Fatalf("the local store holds %d keys after %d new ones, want %d", local.Stats().Keys, i, keys)
		}
		if res := r.decide(t, p, fmt.Sprintf("flood%d", i)); !res.Allowed {
			t.Fatalf("a new key in Local mode: %+v, want admitted", res)
		}
	}
}

// A key that enters Local mode while the local store is full of keys that still
// restrict their clients has no entry of its own to seed its allowance on. Its seed
// went to the policy's overflow entry, and once a slot had freed, its own entry
// started full: a key the shared store had left 0 of 5 a minute was granted 5 more
// 12 s later, where its allowance had earned 1 (10 in 13 s, against 6), and one left
// 2 was granted 2 from the overflow entry and then 5 more. The seed now waits for
// room: until then the key is decided from its last shared answer, as a slow call
// is, without refill; the seed, and the return, count what those decisions spent.
func TestSeedThatFindsTheLocalStoreFullIsKept(t *testing.T) {
	const keys = 4
	p := perMinute5
	for _, tt := range []struct {
		name      string
		spent     int  // on the shared store, of 5
		whileFull int  // admitted while the local store is full (of 3 tries)
		slotFrees bool // 12 s in Local mode, which give the flood's keys their unit back
	}{
		{name: "nothing left", spent: 5, whileFull: 0, slotFrees: true},
		{name: "2 left", spent: 3, whileFull: 2, slotFrees: true},
		{name: "2 left, back while full", spent: 3, whileFull: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, local := newFullLocalRig(t, keys)
			start := r.clock.Now()
			if got := admittedOf(t, r, p, "k", tt.spent); got != tt.spent {
				t.Fatalf("healthy: %d admitted, want %d", got, tt.spent)
			}
			r.trip(t, p)
			fillLocal(t, r, local, p, keys)
			total := tt.spent
			got := admittedOf(t, r, p, "k", 3)
			if got != tt.whileFull {
				t.Errorf("the local store full: %d admitted, want %d of the %d the shared store left", got, tt.whileFull, 5-tt.spent)
			}
			total += got
			if tt.slotFrees {
				// The allowance of "k" has earned 1 since it was seeded, but the seed
				// starts from the last answer, not refilled (as entering Local mode
				// late does), less what the key spent: nothing is left.
				r.clock.Advance(12 * time.Second)
				got = admittedOf(t, r, p, "k", 5)
				if got != 0 {
					t.Errorf("once a slot has freed: %d admitted, want 0 (its allowance holds 1 at most; a fresh entry holds 5)", got)
				}
				total += got
			}
			r.shared.heal()
			r.clock.Advance(time.Second)
			waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
			back := admittedOf(t, r, p, "k", 5)
			total += back
			// The policy admits 5, and 1 more every 12 s.
			elapsed := r.clock.Now().Sub(start)
			if bound := 5 + int(elapsed/(12*time.Second)); total > bound {
				t.Errorf("%d admitted in all in %v (%d on return), want at most %d", total, elapsed, back, bound)
			}
			t.Logf("local store %+v; %d admitted in %v, %d on return", local.Stats(), total, elapsed, back)
		})
	}
}

// A concurrency key enters Local mode holding the leases its last shared answer said
// were in flight. With the local store full of keys that hold leases, those went to
// the policy's overflow entry, and once a slot had freed, the key's own entry held
// none: 2 more admitted beside the 2 still running. Now the key is refused until the
// local store has room for its leases.
func TestLeasesSeededWhileTheLocalStoreIsFullAreKept(t *testing.T) {
	const keys = 4
	ctx := context.Background()
	p := core.MustConcurrencyPolicy("export", 2, time.Minute)
	r, local := newFullLocalRig(t, keys)
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: lease}); err != nil || !res.Allowed {
			t.Fatalf("healthy: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.trip(t, p)
	lease := uint64(100)
	for i := 0; local.Stats().Keys < keys; i++ {
		if i == 10*keys {
			t.Fatalf("the local store holds %d keys after %d new ones, want %d", local.Stats().Keys, i, keys)
		}
		lease++
		if res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: fmt.Sprintf("flood%d", i), Lease: lease}); err != nil || !res.Allowed {
			t.Fatalf("a new key in Local mode: %+v, %v; want admitted", res, err)
		}
	}
	if res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: 3}); err != nil || res.Allowed {
		t.Fatalf("the local store full, both of the key's leases in flight: %+v, %v; want refused", res, err)
	}
	// A flood key's request ends: its entry holds no lease, and makes room.
	if err := r.store.Release(ctx, core.Request{Policy: p, Key: "flood0"}, 101); err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for lease := uint64(4); lease <= 5; lease++ {
		res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			admitted++
		}
	}
	if admitted != 0 {
		t.Errorf("once a slot has freed: %d admitted beside the 2 leases still in flight, want 0", admitted)
	}
	t.Logf("local store %+v", local.Stats())
}

// A stack whose member finds no room for its seed is decided from its members' last
// shared answers, all-or-nothing, until the local store has room: an account left 0
// of 5 a minute stays refused, where its own entry, created full once a slot had
// freed, admitted 5 more 12 s later.
func TestStackSeededWhileTheLocalStoreIsFullIsKept(t *testing.T) {
	const keys = 4
	ip := core.MustPolicy("ip", core.SlidingLog, core.PerMinute(20))
	stack := []core.Request{{Policy: perMinute5, Key: "k"}, {Policy: ip, Key: "10.0.0.1"}}
	r, local := newFullLocalRig(t, keys)
	admitted := func(n int) int {
		t.Helper()
		results, got := make([]core.Result, len(stack)), 0
		for range n {
			allowed, err := r.store.DecideStack(context.Background(), stack, results)
			if err != nil {
				t.Fatal(err)
			}
			if allowed {
				got++
			}
		}
		return got
	}
	if got := admitted(5); got != 5 {
		t.Fatalf("healthy: %d admitted, want 5", got)
	}
	r.trip(t, perMinute5)
	fillLocal(t, r, local, perMinute5, keys)
	if got := admitted(3); got != 0 {
		t.Errorf("the local store full: %d admitted, want 0 (the account has 0 left)", got)
	}
	r.clock.Advance(12 * time.Second)
	if got := admitted(5); got != 0 {
		t.Errorf("once a slot has freed: %d admitted, want 0 (the account's allowance holds 1; a fresh entry holds 5)", got)
	}
	t.Logf("local store %+v", local.Stats())
}
