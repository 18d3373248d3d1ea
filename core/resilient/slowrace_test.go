package resilient_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// Slow calls decided at once from the same last answer share what it left: the
// answer leaves 1, so however many race, one is admitted. Deciding and spending
// under separate locks let racing slow calls each admit the same unit.
func TestRacingSlowCallsShareTheLastAnswer(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))
	const keys, racers = 1000, 8
	for k := 0; k < keys; k++ {
		if res := r.decide(t, p, keyName(k)); !res.Allowed || res.Remaining != 1 {
			t.Fatalf("healthy: %+v, want admitted with 1 left", res)
		}
	}
	r.shared.fail(errDown)
	over := 0
	for k := 0; k < keys; k++ {
		var admitted atomic.Int64
		var start, done sync.WaitGroup
		start.Add(1)
		for i := 0; i < racers; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: keyName(k)})
				if err == nil && res.Allowed {
					admitted.Add(1)
				}
			}()
		}
		start.Done()
		done.Wait()
		if n := admitted.Load(); n > 1 {
			over++
			t.Errorf("key %d: %d racing slow calls admitted from an answer that left 1", k, n)
		}
		if over > 3 {
			t.FailNow()
		}
	}
}

func keyName(k int) string { return fmt.Sprint("k", k) }
