package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// twoMasters is a fake Cluster of two masters, each serving half of the slots, whose
// keys are named as the Redis store names them, and whose masters are named as it
// names them (Node); the master that serves one half is stuck, every call to its
// slots failing, until answering is set.
type twoMasters struct {
	*fakeShared
	stuckHalf bool        // the half of the slots (slot >= 8192) the stuck master serves
	answering atomic.Bool // the stuck master answers again
}

func (f *twoMasters) Key(p core.Policy, key string) string { return "rl:{" + p.ID() + ":" + key + "}" }

func (f *twoMasters) Node(key string) string {
	if (resilient.SlotOf(key) >= 8192) == f.stuckHalf {
		return "stuck"
	}
	return "healthy"
}

func (f *twoMasters) stuck(p core.Policy, key string) bool {
	return !f.answering.Load() && f.Node(f.Key(p, key)) == "stuck"
}

func (f *twoMasters) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if f.stuck(req.Policy, req.Key) {
		f.calls.Add(1)
		return core.Result{}, errDown
	}
	return f.fakeShared.Decide(ctx, req)
}

func (f *twoMasters) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	for i := range reqs {
		if f.stuck(reqs[i].Policy, reqs[i].Key) {
			f.calls.Add(1)
			return false, errDown
		}
	}
	return f.fakeShared.DecideStack(ctx, reqs, results)
}

// A quiet service on a Cluster whose master serving the store-wide probe's key is
// stuck: three requests in a row on keys of that master fail. The store-wide breaker
// must not open, or every key of the healthy master follows its failure mode for as
// long as the master is stuck.
func TestQuietServiceOnAClusterWithAStuckMasterKeepsTheOthersShared(t *testing.T) {
	clock := storetest.NewClock()
	fake := &twoMasters{fakeShared: newFakeShared(t, clock)}
	fake.stuckHalf = resilient.SlotOf(fake.Key(resilient.ProbePolicy, resilient.CheckKey)) >= 8192
	var answered atomic.Int64
	fake.afterDecide = func() { answered.Add(1) }
	local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s, err := resilient.New(fake, resilient.WithClock(clock.Now), resilient.WithLocalStore(local), resilient.WithMonitor(rec),
		resilient.WithDeadline(rigDeadline), resilient.WithFailureRate(resilient.DefaultFailureRate, resilient.DefaultMinCalls, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	var stuckKeys []string
	healthyKey := ""
	for i := 0; len(stuckKeys) < 3 || healthyKey == ""; i++ {
		key := fmt.Sprintf("ip:192.0.2.%d", i)
		if fake.stuck(p, key) {
			stuckKeys = append(stuckKeys, key)
		} else if healthyKey == "" {
			healthyKey = key
		}
	}
	ctx := context.Background()
	for _, key := range stuckKeys[:3] {
		clock.Advance(2 * time.Second)
		if _, err := s.Decide(ctx, core.Request{Policy: p, Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	before := answered.Load()
	waitFor(t, "the store-wide confirming probe", func() bool {
		return s.Breaker() == resilient.BreakerOpen || answered.Load() > before
	})
	if got := s.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("one stuck master of two opened the store-wide breaker (%v): the healthy master's keys left Redis", got)
	}
	clock.Advance(2 * time.Second)
	if _, err := s.Decide(ctx, core.Request{Policy: p, Key: healthyKey}); err != nil {
		t.Fatal(err)
	}
	if got := rec.outcomes(); got[len(got)-1] != "api:allowed/shared" {
		t.Fatalf("a key of the healthy master: %v, want it decided by Redis", got[len(got)-1])
	}
}

// A login stack whose account lives on the healthy master and whose address on the
// stuck one: its failures were counted in the account's slot only, whose probe found
// the healthy master, so no breaker opened and the stack never went to Local mode;
// an address Redis had not answered for was refused for as long as the master was
// stuck. Its failures now count in every member's slot too: the address's slot
// opens, and the login is decided in Local mode.
func TestStackWithAMemberOnAStuckMasterGoesToLocalMode(t *testing.T) {
	clock := storetest.NewClock()
	fake := &twoMasters{fakeShared: newFakeShared(t, clock)}
	local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := resilient.New(fake, resilient.WithClock(clock.Now), resilient.WithLocalStore(local), resilient.WithDeadline(rigDeadline),
		resilient.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	account := core.MustPolicy("login-account", core.TokenBucket, core.PerMinute(5))
	ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	address := ""
	for i := 0; address == ""; i++ {
		if key := fmt.Sprintf("ip:192.0.2.%d", i); fake.stuck(ip, key) {
			address = key
		}
	}
	n := 0
	login := func() bool {
		for n++; fake.stuck(account, fmt.Sprint("user", n)); n++ {
		}
		reqs := []core.Request{{Policy: account, Key: fmt.Sprint("user", n)}, {Policy: ip, Key: address}}
		allowed, err := s.DecideStack(context.Background(), reqs, make([]core.Result, 2))
		if err != nil {
			t.Fatal(err)
		}
		return allowed
	}
	for i := range 3 {
		if login() {
			t.Fatalf("login %d, its address on the stuck master and never answered for: admitted, want refused", i)
		}
	}
	waitFor(t, "a login in Local mode", login)
	if !s.Fallback("login-ip") || !s.Fallback("login-account") {
		t.Errorf("fallback of login-ip %v, of login-account %v; want both in Local mode", s.Fallback("login-ip"), s.Fallback("login-account"))
	}
}

// A start-up Check that fails on the keys of one stuck master of two leaves the
// store-wide breaker closed: its confirming probe reaches the other master too, as
// the confirming probe of failures in traffic does, and the healthy master's keys
// stay on Redis. The failed call's slot is confirmed on its own, and its breaker
// opens.
func TestCheckWithOneStuckMasterKeepsTheBreakerClosed(t *testing.T) {
	clock := storetest.NewClock()
	fake := &twoMasters{fakeShared: newFakeShared(t, clock)}
	first := resilient.CheckPolicies()[0]
	fake.stuckHalf = resilient.SlotOf(fake.Key(first, resilient.CheckKey)) >= 8192
	s, err := resilient.New(fake, resilient.WithClock(clock.Now), resilient.WithDeadline(rigDeadline))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(context.Background()); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Check with the master of its first key stuck: %v, want unavailable", err)
	}
	if got := s.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("one stuck master of two opened the store-wide breaker (%v)", got)
	}
	if got := s.BreakerFor(core.Request{Policy: first, Key: resilient.CheckKey}); got != resilient.BreakerOpen {
		t.Fatalf("the breaker of the failed call's slot is %v, want open: its master is stuck", got)
	}
}
