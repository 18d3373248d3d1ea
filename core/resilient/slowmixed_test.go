package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestMixedStackSlowCallDecidesLocalFromLastAnswer: while the breakers are
// closed, a slow call decides a Local policy from the key's last answer and refuses
// a key the shared store never answered for, and stacks follow the same rules
// member by member (docs/failure.md). A stack mixing a Local policy with an Open
// one used to decide its Local member from a fresh local allowance, so each
// instance granted the whole capacity of a key it had not seen: a second instance
// admitted 5 more attempts at an account limited to 5 a minute.
func TestMixedStackSlowCallDecidesLocalFromLastAnswer(t *testing.T) {
	clock := storetest.NewClock()
	mem, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	subnet := core.MustPolicy("login-subnet", core.TokenBucket, core.PerMinute(100))
	var sharedFakes []*fakeShared
	newInstance := func() *resilient.Store {
		f := &fakeShared{mem: mem, release: make(chan struct{})}
		sharedFakes = append(sharedFakes, f)
		local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		if err != nil {
			t.Fatal(err)
		}
		s, err := resilient.New(f, resilient.WithClock(clock.Now), resilient.WithLocalStore(local),
			resilient.WithDeadline(time.Second), resilient.WithPolicyMode("login-subnet", resilient.Open), neverOpen)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := newInstance(), newInstance()
	attempts := func(s *resilient.Store, n int) (admitted int) {
		for i := 0; i < n; i++ {
			reqs := []core.Request{{Policy: account, Key: "user:victim"}, {Policy: subnet, Key: "net:203.0.113.0/24"}}
			results := make([]core.Result, 2)
			ok, err := s.DecideStack(context.Background(), reqs, results)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				admitted++
			}
		}
		return admitted
	}
	if got := attempts(a, 5); got != 5 { // healthy: instance A spends the account in Redis
		t.Fatalf("healthy: %d", got)
	}
	for _, f := range sharedFakes {
		f.fail(errDown) // a slow spell: a few calls fail, the breakers stay closed
	}
	got := attempts(b, 5) // instance B never decided this account
	if b.Breaker() != resilient.BreakerClosed {
		t.Fatalf("breaker %v; this test is about slow calls", b.Breaker())
	}
	if got > 0 {
		t.Fatalf("account spent 5 of 5/min in Redis; during a slow spell (breakers closed) another instance admitted %d more", got)
	}
}
