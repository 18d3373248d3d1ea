package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// NewStore returns a fresh, empty store under test whose decisions are taken at
// clock's time. It should register its own cleanup with t.Cleanup.
type NewStore func(t testing.TB, clock *Clock) core.Store

// Run runs the whole conformance suite against the stores newStore makes.
func Run(t *testing.T, newStore NewStore) {
	t.Run("Traces", func(t *testing.T) { testTraces(t, newStore, false) })
	t.Run("TracesWithClockGoingBack", func(t *testing.T) { testTraces(t, newStore, true) })
	t.Run("RetryAfterWithClockGoingBack", func(t *testing.T) { testRetryAfterWithClockGoingBack(t, newStore) })
	t.Run("FineGCRAWithClockBehind", func(t *testing.T) { testFineGCRAClockBehind(t, newStore) })
	t.Run("Stacks", func(t *testing.T) { testStacks(t, newStore) })
	t.Run("PoliciesDoNotShareState", func(t *testing.T) { testIsolation(t, newStore) })
	t.Run("PlanChangeTakesEffectOnNextRequest", func(t *testing.T) { testPlanChange(t, newStore) })
	t.Run("InvalidRequests", func(t *testing.T) { testInvalid(t, newStore) })
	t.Run("ConcurrentOneKey", func(t *testing.T) { testConcurrent(t, newStore) })
	t.Run("ConcurrentOverlappingStacks", func(t *testing.T) { testConcurrentStacks(t, newStore) })
	t.Run("ConcurrencyLeases", func(t *testing.T) { testLeases(t, newStore) })
	t.Run("ConcurrencyRetriedAcquire", func(t *testing.T) { testRetriedAcquire(t, newStore) })
	t.Run("ExactAtTheEndsOfTheRange", func(t *testing.T) { testRangeEnds(t, newStore) })
	t.Run("Refunds", func(t *testing.T) { testRefunds(t, newStore) })
}

// traceLength is how many requests each trace holds.
const traceLength = 250

func testTraces(t *testing.T, newStore NewStore, backwards bool) {
	for _, p := range Policies() {
		t.Run(p.Name(), func(t *testing.T) {
			for seed := uint64(1); seed <= 2; seed++ {
				clock := NewClock()
				store := newStore(t, clock)
				ref := newModel()
				trace := makeTrace(p, seed, traceLength, backwards)
				admitted := make([]bool, len(trace))
				for i, s := range trace {
					clock.Set(s.at)
					req := core.Request{Policy: p, Key: s.key, Cost: s.cost, Lease: uint64(i + 1)}
					if s.release >= 0 && admitted[s.release] {
						rel := core.Request{Policy: p, Key: trace[s.release].key}
						if err := store.Release(context.Background(), rel, uint64(s.release+1)); err != nil {
							t.Fatalf("seed %d step %d: release: %v", seed, i, err)
						}
						ref.release(rel, uint64(s.release+1))
						admitted[s.release] = false
					}
					got, err := store.Decide(context.Background(), req)
					if err != nil {
						t.Fatalf("seed %d step %d (t=%d key=%s cost=%d): %v", seed, i, s.at-Start, s.key, s.cost, err)
					}
					want := ref.decide(req, s.at)
					if got != want {
						t.Fatalf("seed %d step %d (t=+%dms key=%s cost=%d):\n got %+v\nwant %+v", seed, i, s.at-Start, s.key, s.cost, got, want)
					}
					admitted[i] = got.Allowed
				}
			}
		})
	}
}

// loginStack is the reference server's login stack: account, IP and subnet.
func loginStack() []core.Policy {
	return []core.Policy{
		core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5)),
		core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20)),
		core.MustPolicy("login-subnet", core.FixedWindow, core.PerMinute(100)),
	}
}

func testStacks(t *testing.T, newStore NewStore) {
	mixed := []core.Policy{
		core.MustPolicy("stack-gcra", core.GCRA, core.PerSecond(4), core.WithBurst(6)),
		core.MustPolicy("stack-window", core.SlidingWindow, core.Rate{Limit: 9, Period: 2 * time.Second}),
		core.MustPolicy("stack-leaky", core.LeakyBucket, core.PerSecond(5), core.WithBurst(4)),
		core.MustConcurrencyPolicy("stack-inflight", 3, 700*time.Millisecond),
	}
	for name, policies := range map[string][]core.Policy{"login": loginStack(), "mixed": mixed} {
		t.Run(name, func(t *testing.T) {
			clock := NewClock()
			store := newStore(t, clock)
			ref := newModel()
			accounts := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
			ips := []string{"203.0.113.9", "203.0.113.10", "198.51.100.7"}
			at := Start
			for i := 0; i < 400; i++ {
				at += int64((i * 7919) % 1500)
				if i%5 == 0 {
					at -= 0 // several requests at one instant
				}
				clock.Set(at)
				ip := ips[(i/3)%len(ips)]
				keys := []string{accounts[(i*5)%len(accounts)], ip, ip[:len(ip)-2]}
				reqs := make([]core.Request, len(policies))
				for j, p := range policies {
					reqs[j] = core.Request{Policy: p, Key: keys[j%len(keys)], Lease: uint64(i + 1)}
				}
				got := make([]core.Result, len(reqs))
				allowed, err := store.DecideStack(context.Background(), reqs, got)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				want, wantAllowed := ref.decideStack(reqs, at)
				if allowed != wantAllowed {
					t.Fatalf("step %d: allowed=%v, model says %v (%+v)", i, allowed, wantAllowed, want)
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("step %d policy %s:\n got %+v\nwant %+v", i, policies[j].Name(), got[j], want[j])
					}
				}
			}
		})
	}
	t.Run("AllOrNothing", func(t *testing.T) {
		clock := NewClock()
		store := newStore(t, clock)
		policies := loginStack()
		// 20 accounts from one IP: the IP policy admits 20 and refuses the 21st.
		for i := 0; i < 21; i++ {
			ok := decideLogin(t, store, policies, fmt.Sprintf("user%d", i), "203.0.113.9", "203.0.113")
			if want := i < 20; ok != want {
				t.Fatalf("account %d from one IP: allowed=%v, want %v", i, ok, want)
			}
		}
		// Refused attempts for alice from that IP spend none of alice's budget.
		for i := 0; i < 10; i++ {
			if decideLogin(t, store, policies, "alice", "203.0.113.9", "203.0.113") {
				t.Fatalf("alice from the exhausted IP was admitted on attempt %d", i)
			}
		}
		for i := 0; i < 5; i++ {
			if !decideLogin(t, store, policies, "alice", "198.51.100.7", "198.51.100") {
				t.Fatalf("alice from a fresh subnet refused on attempt %d: the refused stack spent her budget", i)
			}
		}
		if decideLogin(t, store, policies, "alice", "192.0.2.1", "192.0.2") {
			t.Fatal("alice's sixth attempt within a minute was admitted")
		}
	})
}

func decideLogin(t testing.TB, store core.Store, policies []core.Policy, account, ip, subnet string) bool {
	t.Helper()
	reqs := []core.Request{
		{Policy: policies[0], Key: account},
		{Policy: policies[1], Key: ip},
		{Policy: policies[2], Key: subnet},
	}
	results := make([]core.Result, len(reqs))
	allowed, err := store.DecideStack(context.Background(), reqs, results)
	if err != nil {
		t.Fatal(err)
	}
	return allowed
}

func testIsolation(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock)
	a := core.MustPolicy("isolation-a", core.FixedWindow, core.PerMinute(2))
	b := core.MustPolicy("isolation-b", core.FixedWindow, core.PerMinute(2))
	for i := 0; i < 2; i++ {
		mustAllow(t, store, core.Request{Policy: a, Key: "k"}, true)
	}
	mustAllow(t, store, core.Request{Policy: a, Key: "k"}, false)
	mustAllow(t, store, core.Request{Policy: b, Key: "k"}, true)
	mustAllow(t, store, core.Request{Policy: a, Key: "other"}, true)
}

func testPlanChange(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock)
	free := core.MustPolicy("plan", core.TokenBucket, core.PerMinute(3))
	pro := core.MustPolicy("plan", core.TokenBucket, core.PerMinute(10))
	for i := 0; i < 3; i++ {
		mustAllow(t, store, core.Request{Policy: free, Key: "tenant"}, true)
	}
	mustAllow(t, store, core.Request{Policy: free, Key: "tenant"}, false)
	// The upgrade applies on the next request, with the new plan's own state.
	res := mustAllow(t, store, core.Request{Policy: pro, Key: "tenant"}, true)
	if res.Limit != 10 || res.Remaining != 9 {
		t.Fatalf("after the upgrade: limit %d remaining %d, want 10 and 9", res.Limit, res.Remaining)
	}
	// Going back to the old plan finds its state where it was left.
	mustAllow(t, store, core.Request{Policy: free, Key: "tenant"}, false)
}

func mustAllow(t testing.TB, store core.Store, req core.Request, want bool) core.Result {
	t.Helper()
	res, err := store.Decide(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Policy.Name(), req.Key, err)
	}
	if res.Allowed != want {
		t.Fatalf("%s %s: allowed=%v, want %v (%+v)", req.Policy.Name(), req.Key, res.Allowed, want, res)
	}
	return res
}

func testInvalid(t *testing.T, newStore NewStore) {
	store := newStore(t, NewClock())
	ctx := context.Background()
	p := core.MustPolicy("invalid", core.TokenBucket, core.PerSecond(5))
	cases := []struct {
		name string
		req  core.Request
		want error
	}{
		{"zero policy", core.Request{Key: "k"}, core.ErrInvalidPolicy},
		{"cost above capacity", core.Request{Policy: p, Key: "k", Cost: 6}, core.ErrInvalidCost},
		{"negative cost", core.Request{Policy: p, Key: "k", Cost: -1}, core.ErrInvalidCost},
		{"empty key", core.Request{Policy: p, Key: ""}, core.ErrInvalidKey},
		{"huge key", core.Request{Policy: p, Key: string(make([]byte, core.MaxKeyLength+1))}, core.ErrInvalidKey},
	}
	for _, c := range cases {
		_, err := store.Decide(ctx, c.req)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	dup := []core.Request{{Policy: p, Key: "a"}, {Policy: p, Key: "b"}}
	if _, err := store.DecideStack(ctx, dup, make([]core.Result, 2)); !errors.Is(err, core.ErrInvalidPolicy) {
		t.Errorf("a stack naming one policy twice: error %v, want ErrInvalidPolicy", err)
	}
	// Nothing above may have spent anything.
	res := mustAllow(t, store, core.Request{Policy: p, Key: "k"}, true)
	if res.Remaining != 4 {
		t.Errorf("after rejected requests: remaining %d, want 4", res.Remaining)
	}
}

// testConcurrent hammers one key from 64 goroutines at a frozen instant, then again
// after the clock moves: the store must admit exactly what the model admits.
func testConcurrent(t *testing.T, newStore NewStore) {
	for _, p := range []core.Policy{
		core.MustPolicy("hammer-token", core.TokenBucket, core.PerSecond(100), core.WithBurst(50)),
		core.MustPolicy("hammer-gcra", core.GCRA, core.PerSecond(100), core.WithBurst(50)),
		core.MustPolicy("hammer-window", core.SlidingWindow, core.PerSecond(80)),
		core.MustPolicy("hammer-log", core.SlidingLog, core.PerSecond(60)),
		core.MustPolicy("hammer-leaky", core.LeakyBucket, core.PerSecond(100), core.WithBurst(30)),
	} {
		t.Run(p.Name(), func(t *testing.T) {
			clock := NewClock()
			store := newStore(t, clock)
			ref := newModel()
			for round, advance := range []time.Duration{0, 200 * time.Millisecond, 1500 * time.Millisecond} {
				clock.Advance(advance)
				const goroutines, each = 64, 8
				admitted := hammer(t, goroutines, each, func(int, int) (bool, error) {
					res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "hot"})
					return res.Allowed, err
				})
				want := int64(0)
				for i := 0; i < goroutines*each; i++ {
					if ref.decide(core.Request{Policy: p, Key: "hot"}, clock.Millis()).Allowed {
						want++
					}
				}
				if got := admitted; got != want {
					t.Fatalf("round %d: %d goroutines admitted %d, the model admits exactly %d", round, goroutines, got, want)
				}
			}
		})
	}
}

// testConcurrentStacks runs, at once, two kinds of stack that share one key and
// single decisions on that key, with the clock frozen. The shared key admits
// exactly its limit in all, and each stack's other key was charged exactly as
// often as its stack was admitted: all-or-nothing holds under contention, and
// overlapping stacks neither deadlock nor lose a charge.
func testConcurrentStacks(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock)
	ctx := context.Background()
	left := core.MustPolicy("overlap-left", core.FixedWindow, core.Rate{Limit: 1000, Period: time.Hour})
	shared := core.MustPolicy("overlap-shared", core.TokenBucket, core.Rate{Limit: 1, Period: time.Hour}, core.WithBurst(40))
	right := core.MustPolicy("overlap-right", core.GCRA, core.Rate{Limit: 1, Period: time.Hour}, core.WithBurst(1000))
	stacks := [][]core.Request{
		{{Policy: left, Key: "left"}, {Policy: shared, Key: "shared"}},
		{{Policy: shared, Key: "shared"}, {Policy: right, Key: "right"}},
		{{Policy: shared, Key: "shared"}},
	}
	var admitted [3]atomic.Int64
	hammer(t, 12, 12, func(g, i int) (ok bool, err error) {
		kind := (g + i) % len(stacks)
		if len(stacks[kind]) == 1 { // a single decision, which stores may take on another path
			var res core.Result
			res, err = store.Decide(ctx, stacks[kind][0])
			ok = res.Allowed
		} else {
			ok, err = store.DecideStack(ctx, stacks[kind], make([]core.Result, len(stacks[kind])))
		}
		if ok {
			admitted[kind].Add(1)
		}
		return ok, err
	})
	total := admitted[0].Load() + admitted[1].Load() + admitted[2].Load()
	if total != shared.Burst() {
		t.Fatalf("the shared key admitted %d (%d, %d and %d by kind), want exactly its burst %d",
			total, admitted[0].Load(), admitted[1].Load(), admitted[2].Load(), shared.Burst())
	}
	for kind, own := range []core.Request{stacks[0][0], stacks[1][1]} {
		res := mustAllow(t, store, own, true) // charges one more to read the count
		if spent := own.Policy.Capacity() - res.Remaining - 1; spent != admitted[kind].Load() {
			t.Errorf("%s was charged %d times, its stack was admitted %d times", own.Policy.Name(), spent, admitted[kind].Load())
		}
	}
}

// hammer calls decide each times from each of goroutines goroutines at once (g is
// the goroutine, i the call) and returns how many calls were admitted. It fails t
// with the first error, after every goroutine has stopped.
func hammer(t *testing.T, goroutines, each int, decide func(g, i int) (bool, error)) (admitted int64) {
	t.Helper()
	var count atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				ok, err := decide(g, i)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					count.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return count.Load()
}

func testLeases(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock)
	ctx := context.Background()
	p := core.MustConcurrencyPolicy("leases", 2, 5*time.Second)
	req := func(id uint64) core.Request { return core.Request{Policy: p, Key: "client", Lease: id} }
	mustAllow(t, store, req(1), true)
	mustAllow(t, store, req(2), true)
	refused := mustAllow(t, store, req(3), false)
	if refused.RetryAfter <= 0 || refused.RetryAfter > time.Second {
		t.Fatalf("refused lease: retry after %v, want a short positive hint", refused.RetryAfter)
	}
	if err := store.Release(ctx, req(0), 1); err != nil {
		t.Fatal(err)
	}
	if err := store.Release(ctx, req(0), 1); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
	mustAllow(t, store, req(4), true)
	mustAllow(t, store, req(5), false)
	// Leases that are never released lapse after the lease timeout.
	clock.Advance(5 * time.Second)
	mustAllow(t, store, req(6), true)
	mustAllow(t, store, req(7), true)
	mustAllow(t, store, req(8), false)
	// A request that outlived its lease releases it late: that frees no one
	// else's slot.
	for _, late := range []uint64{2, 4} {
		if err := store.Release(ctx, req(0), late); err != nil {
			t.Fatalf("releasing lapsed lease %d: %v", late, err)
		}
	}
	mustAllow(t, store, req(9), false)
	// Lease IDs are whole 64-bit numbers: two that a float64 cannot tell apart
	// (as Redis Lua's numbers cannot) are two leases, each released alone.
	clock.Advance(5 * time.Second)
	big := uint64(1)<<63 | 1<<62
	mustAllow(t, store, req(big+1), true)
	mustAllow(t, store, req(big+2), true)
	if err := store.Release(ctx, req(0), big+1); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, store, req(10), true)
	mustAllow(t, store, req(11), false) // big+2 is still held
}

// testRangeEnds replays requests whose decisions hinge on the last unit of numbers
// near 2^57, where a store that multiplies in float64 (as Lua does) would round. Each
// case is a tie the exact arithmetic decides one way and a rounded product the other.
func testRangeEnds(t *testing.T, newStore NewStore) {
	const day = 24 * time.Hour
	type request struct{ offset, cost int64 } // offset from Start, ms
	cases := []struct {
		policy   core.Policy
		requests []request
	}{
		{
			// prev×(period-e) = spare×period + 1: exactly one unit too many, so refused;
			// both products are about 8.6e16 and round to the same float64.
			core.MustPolicy("range-sliding-window", core.SlidingWindow, core.Rate{Limit: 1_000_000_000, Period: day}),
			[]request{{-day.Milliseconds() + 5, 999_999_001}, {11_798_999, 136_563_351}, {11_799_000, 136_563_351}},
		},
		{
			core.MustPolicy("range-token-bucket", core.TokenBucket, core.Rate{Limit: 999_999_999, Period: day}),
			[]request{{0, 999_999_999}, {86_399_999, 999_999_998}, {86_400_000, 1}, {86_400_001, 12}},
		},
		{
			core.MustPolicy("range-gcra", core.GCRA, core.Rate{Limit: 1_000_000_000, Period: time.Millisecond}),
			[]request{{0, 1_000_000_000}, {0, 1}, {1, 1_000_000_000}, {1, 1}},
		},
		{
			core.MustPolicy("range-leaky", core.LeakyBucket, core.Rate{Limit: 999_999_999, Period: day}, core.WithBurst(3)),
			[]request{{0, 3}, {0, 1}, {0, 1}, {1, 1}, {345, 2}},
		},
	}
	for _, c := range cases {
		t.Run(c.policy.Name(), func(t *testing.T) {
			if Start%(24*time.Hour).Milliseconds() != 0 {
				t.Fatal("Start must be a day boundary for these cases")
			}
			clock := NewClock()
			store := newStore(t, clock)
			ref := newModel()
			for i, r := range c.requests {
				clock.Set(Start + r.offset)
				req := core.Request{Policy: c.policy, Key: "range", Cost: r.cost}
				got, err := store.Decide(context.Background(), req)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if want := ref.decide(req, Start+r.offset); got != want {
					t.Fatalf("request %d (t=%+dms cost %d):\n got %+v\nwant %+v", i, r.offset, r.cost, got, want)
				}
			}
		})
	}
}
