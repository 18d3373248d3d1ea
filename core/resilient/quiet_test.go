package resilient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A service too quiet to fill the breaker's window (one request every 2 s, where the
// window of 1 s needs 10 calls) loses its store. The first requests are decided as
// slow calls, and a client the store never answered for is refused; after 3 failures
// in a row, however far apart, a probe confirms the outage, the breaker opens, and
// Local mode admits new clients at their share of the policy rather than refusing
// everyone for the whole outage.
func TestQuietServiceFallsBackOnADeadStore(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(resilient.DefaultFailureRate, resilient.DefaultMinCalls, time.Second))
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	r.shared.fail(errDown)
	for i := 0; i < 3; i++ {
		r.clock.Advance(2 * time.Second)
		res := r.decide(t, p, fmt.Sprintf("ip:192.0.2.%d", i))
		if !res.Allowed {
			continue
		}
		// The third failure sends the confirming probe, which may open the breaker
		// before that request is decided: it then goes to Local mode, as it should.
		outcomes := r.rec.outcomes()
		if i < 2 || outcomes[len(outcomes)-1] != "api:allowed/local" {
			t.Fatalf("request %d: a client the store never answered for was admitted before the outage was confirmed (%v)", i, outcomes)
		}
	}
	waitFor(t, "the breaker to open after 3 failures in a row", func() bool { return r.store.Breaker() == resilient.BreakerOpen })
	r.clock.Advance(2 * time.Second)
	if res := r.decide(t, p, "ip:192.0.2.100"); !res.Allowed {
		t.Fatalf("in Local mode, a new client was refused: %+v", res)
	}
}
