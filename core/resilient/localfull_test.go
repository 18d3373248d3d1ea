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
// 12 s later, where its allowance had earned 1, and one left 2 was granted 2 from the
// overflow entry and then 5 more. The seed now waits for room: until then the key is
// decided from its last shared answer, as a slow call is, without refill, and the
// seed counts what those decisions spent.
func TestSeedThatFindsTheLocalStoreFullIsKept(t *testing.T) {
	const keys = 4
	p := perMinute5
	for _, tt := range []struct {
		name      string
		spent     int // on the shared store, of 5
		whileFull int // admitted while the local store is full (of 3 tries)
		afterRoom int // admitted once a slot has freed (of 5 tries)
		allowance int // what the allowance holds by then, exactly
	}{
		{name: "nothing left", spent: 5, whileFull: 0, afterRoom: 0, allowance: 1},
		{name: "2 left", spent: 3, whileFull: 2, afterRoom: 0, allowance: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, local := newFullLocalRig(t, keys)
			if got := admittedOf(t, r, p, "k", tt.spent); got != tt.spent {
				t.Fatalf("healthy: %d admitted, want %d", got, tt.spent)
			}
			r.trip(t, p)
			fillLocal(t, r, local, p, keys)
			if got := admittedOf(t, r, p, "k", 3); got != tt.whileFull {
				t.Errorf("the local store full: %d admitted, want %d of the %d the shared store left", got, tt.whileFull, 5-tt.spent)
			}
			// The flood's keys have earned back their unit; the allowance of "k" has
			// earned 1 since it was seeded.
			r.clock.Advance(12 * time.Second)
			got := admittedOf(t, r, p, "k", 5)
			if got != tt.afterRoom {
				t.Errorf("once a slot has freed: %d admitted, want %d (its allowance holds %d; a fresh entry holds 5)", got, tt.afterRoom, tt.allowance)
			}
			// Back on the shared store, 13 s after the first request, the key has had
			// at most the policy's 5 and the 1 it earned in 12 s.
			r.shared.heal()
			r.clock.Advance(time.Second)
			waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
			back := admittedOf(t, r, p, "k", 5)
			if total := tt.spent + tt.whileFull + got + back; total > 6 {
				t.Errorf("%d admitted in all in 13 s (%d on return), want at most 6", total, back)
			}
			t.Logf("local store %+v; admitted %d while full, %d once a slot freed (allowance %d), %d on return", local.Stats(), tt.whileFull, got, tt.allowance, back)
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
