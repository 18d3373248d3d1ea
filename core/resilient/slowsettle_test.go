package resilient_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// Local mode spends what the key's last answer left; the breaker closes, and before
// any call succeeds (the settlement still owed), a blip fails two calls, too few to
// open the breaker again. Decided from the last answer as if Local mode had admitted
// nothing, they admitted 7 in a second under 5 a minute; the local allowance seeded
// from that answer knows what it spent.
func TestSlowCallsAfterAReturnCountWhatLocalModeSpent(t *testing.T) {
	r := newRig(t)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	admitted := admittedOf(t, r, p, "k", 1) // the answer: 4 left
	r.trip(t, p)
	admitted += admittedOf(t, r, p, "k", 6) // Local mode: the 4 left
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "the breaker to close", func() bool { return r.store.Breaker() == resilient.BreakerClosed })
	r.shared.fail(errDown)
	admitted += admittedOf(t, r, p, "k", 2)
	if admitted != 5 {
		t.Fatalf("%d admitted within a second under 5 a minute; outcomes %v", admitted, r.rec.outcomes())
	}
}

// A slow call owes the store 1 of 3. The next decision, A, settles it: its call
// carries its own request and the charge. B, decided meanwhile from the last answer
// (2 left, 1 spent by the slow call), did not count A's request, on its way: 4
// admitted at one instant under 3 a minute.
func TestSlowCallRacingASettlementCountsTheSettlersRequest(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(3))
	admitted := admittedOf(t, r, p, "k", 1)
	r.shared.fail(errDown)
	admitted += admittedOf(t, r, p, "k", 1)
	r.shared.heal()
	var b core.Result
	onDecideCall(r, 2, func() { b = r.decide(t, p, "k") }) // during A's call, or its settling charge
	if a := r.decide(t, p, "k"); a.Allowed {
		admitted++
	}
	if b.Allowed {
		admitted++
	}
	admitted += admittedOf(t, r, p, "k", 3)
	if admitted != 3 {
		t.Fatalf("%d admitted at one instant under 3 a minute (B: %+v); outcomes %v", admitted, b, r.rec.outcomes())
	}
}

// The memo of last answers holds 65,536 keys by default. 70,000 clients of one
// request each filled it; a key that then spent 4 of 5 on the shared store found no
// room for its answer, and Local mode started it from a fresh share: 9 admitted at
// one instant under 5 a minute. Its answer now takes the place of one that recovers
// sooner.
func TestAnswersStillMatterWhenTheMemoIsFull(t *testing.T) {
	if testing.Short() {
		t.Skip("70,000 decisions; skipped with -short")
	}
	r := newRig(t, resilient.WithFailureRate(0.5, 10_000_000, time.Minute))
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	for i := range 70_000 {
		r.decide(t, p, "ip:"+strconv.Itoa(i))
	}
	admitted := admittedOf(t, r, p, "victim", 4)
	r.trip(t, p)
	admitted += admittedOf(t, r, p, "victim", 6)
	if admitted != 5 {
		t.Fatalf("%d admitted at one instant under 5 a minute", admitted)
	}
}
