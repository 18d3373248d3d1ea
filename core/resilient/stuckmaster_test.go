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

// Once one slot of a stuck master has opened its breaker, every key of that master
// follows its failure mode without calling the store: before, each slot waited for
// its own 3 failed calls and a probe, and until then every key of the master waited
// out the deadline and, unknown, was refused. The other master's keys stay shared,
// and the master's keys come back when the opened slot's probe succeeds.
func TestStuckMasterSendsAllItsKeysToTheirFailureMode(t *testing.T) {
	clock := storetest.NewClock()
	fake := &twoMasters{fakeShared: newFakeShared(t, clock), stuckHalf: true}
	fake.answering.Store(true)
	local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s, err := resilient.New(fake, resilient.WithClock(clock.Now), resilient.WithLocalStore(local), resilient.WithMonitor(rec),
		resilient.WithDeadline(rigDeadline), resilient.WithRecoveryProbes(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	req := func(key string) core.Request { return core.Request{Policy: p, Key: key} }
	// first: a key of the stuck master; others: 20 more, each in another slot;
	// healthy: a key of the healthy master.
	var first, healthy string
	var others []string
	slots := map[int]bool{}
	for i := 0; len(others) < 20 || healthy == ""; i++ {
		key := fmt.Sprintf("user:%d", i)
		slot := resilient.SlotOf(fake.Key(p, key))
		switch {
		case fake.Node(fake.Key(p, key)) == "healthy":
			healthy = key
		case first == "":
			first, slots[slot] = key, true
		case !slots[slot] && len(others) < 20:
			others, slots[slot] = append(others, key), true
		}
	}
	ctx := context.Background()
	for _, key := range append([]string{first, healthy}, others...) {
		if res, err := s.Decide(ctx, req(key)); err != nil || !res.Allowed {
			t.Fatalf("healthy %s: %+v, %v", key, res, err)
		}
	}

	fake.answering.Store(false)
	for i := 0; s.BreakerFor(req(first)) != resilient.BreakerOpen; i++ {
		if i == 50 {
			t.Fatalf("the slot of %s did not open after %d failed calls", first, i)
		}
		if _, err := s.Decide(ctx, req(first)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // the failures' confirming probe, in the background
	}
	// The probe opens the slot's breaker, then names its master as stuck.
	waitFor(t, "the stuck master to be named", func() bool { return s.BreakerFor(req(others[0])) == resilient.BreakerOpen })
	calls := fake.calls.Load()
	before := len(rec.outcomes())
	for _, key := range others {
		res, err := s.Decide(ctx, req(key))
		if err != nil || !res.Allowed || res.Remaining != 8 {
			t.Fatalf("%s, on the stuck master in another slot: %+v, %v; want admitted by Local mode from its last answer (8 left)", key, res, err)
		}
		if got := s.BreakerFor(req(key)); got != resilient.BreakerOpen {
			t.Fatalf("BreakerFor(%s) on the stuck master: %v, want open", key, got)
		}
	}
	if got := fake.calls.Load(); got != calls {
		t.Fatalf("the stuck master's other keys made %d calls, want none", got-calls)
	}
	for _, o := range rec.outcomes()[before:] {
		if o != "api:allowed/local" {
			t.Fatalf("a key of the stuck master was decided %s, want api:allowed/local", o)
		}
	}
	if res, err := s.Decide(ctx, req(healthy)); err != nil || !res.Allowed || res.Unenforced || res.DecidedAt.IsZero() {
		t.Fatalf("%s, on the healthy master: %+v, %v; want decided by the store", healthy, res, err)
	}

	fake.answering.Store(true)
	for i := 0; s.BreakerFor(req(others[0])) != resilient.BreakerClosed; i++ {
		if i == 100 {
			t.Fatalf("the stuck master's keys did not come back after the master did")
		}
		clock.Advance(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
	calls = fake.calls.Load()
	if res, err := s.Decide(ctx, req(others[0])); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
		t.Fatalf("%s after the master's return: %+v, %v; want decided by the store", others[0], res, err)
	}
	if fake.calls.Load() == calls {
		t.Fatalf("%s after the master's return made no call", others[0])
	}
}
