package resilient_test

import (
	"fmt"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestReplicasReturningOneAfterTheOther pins the bound of an outage's return across
// replicas (docs/failure.md). Two replicas of WithReplicas(2) share a bucket of 10 an
// hour; before the outage A spends 1 and B 1 (A heard 9 left, B 8), so each has a
// share of 4 in Local mode, where A spends a and B spends b. The store comes back;
// A returns first and admits all it can, then B does.
//
// A's settlement charges the shared store down to what its own allowance leaves,
// times 2: it cannot know what B spent, and counts it as what it spent itself.
// When both spent alike that is exact: the key admits 10 in all. When B spent more,
// A's clients get B's extra spending again until B settles (at most b − a more);
// when A spent more, the key admits up to a − b less.
func TestReplicasReturningOneAfterTheOther(t *testing.T) {
	for _, spent := range replicaSpending {
		t.Run(fmt.Sprintf("A%d,B%d", spent[0], spent[1]), func(t *testing.T) {
			clock := storetest.NewClock()
			shared := newFakeShared(t, clock)
			returnOneAfterTheOther(t, clock, shared, spent, func(down bool) {
				if down {
					shared.fail(errDown)
				} else {
					shared.heal()
				}
			})
		})
	}
}

// replicaSpending are what replicas A and B spend in Local mode in
// TestReplicasReturningOneAfterTheOther: alike, and lopsided either way.
var replicaSpending = [][2]int{{0, 0}, {2, 2}, {4, 4}, {0, 4}, {1, 3}, {4, 0}}

// returnOneAfterTheOther runs TestReplicasReturningOneAfterTheOther's schedule over
// shared, whose calls cut cuts off (true) and brings back (false), with A and B
// spending spent in Local mode.
func returnOneAfterTheOther(t *testing.T, clock *storetest.Clock, shared core.Store, spent [2]int, cut func(down bool)) {
	a, b := spent[0], spent[1]
	p := core.MustPolicy("api", core.TokenBucket, core.PerHour(10))
	replicas := [2]*rig{newRigOver(t, clock, shared, resilient.WithReplicas(2)), newRigOver(t, clock, shared, resilient.WithReplicas(2))}
	total := 0
	for _, r := range replicas {
		total += admittedOf(t, r, p, "k", 1)
	}
	cut(true)
	for i, r := range replicas {
		tripFor(t, r.store, core.Request{Policy: p, Key: "k"})
		if got := admittedOf(t, r, p, "k", spent[i]); got != spent[i] {
			t.Fatalf("replica %d admitted %d of %d in Local mode; its share is 4", i, got, spent[i])
		}
		total += spent[i]
	}
	cut(false)
	back := [2]int{}
	for i, r := range replicas {
		r.awaitRecovery(t, func() bool {
			return r.store.Breaker() == resilient.BreakerClosed && r.store.BreakerFor(core.Request{Policy: p, Key: "k"}) == resilient.BreakerClosed
		})
		back[i] = admittedOf(t, r, p, "k", 20)
		total += back[i]
	}
	// The recovery waits moved the clock a few seconds: 10 an hour refills less
	// than a unit.
	bound := 10 + max(0, b-a)
	t.Logf("A spent %d and B %d in Local mode; back on the shared store A admitted %d, then B %d: %d in all (bound %d)", a, b, back[0], back[1], total, bound)
	if total > bound {
		t.Errorf("the key admitted %d in all, want at most %d", total, bound)
	}
	if a == b && total != 10 {
		t.Errorf("both replicas spent %d: the key admitted %d, want exactly 10", a, total)
	}
}
