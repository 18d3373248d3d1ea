package harness

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// OverGrant is what an over-grant check saw on one implementation.
type OverGrant struct {
	// Admitted and Decisions count the admissions and all decisions.
	Admitted, Decisions int64
	// Elapsed runs from the moment the goroutines are released to the end of the last
	// decision.
	Elapsed time.Duration
	// Bound is the most a bucket of the policy may admit in Elapsed:
	// burst + rate × elapsed.
	Bound float64
	// Errors counts decisions that returned an error; Err is the first of them.
	Errors int64
	Err    error
}

// Over is how many admissions exceeded the bound (0 when none did).
func (o OverGrant) Over() int64 {
	return max(0, o.Admitted-int64(math.Floor(o.Bound)))
}

// Under is how far the admissions fell short of the bound (0 when they reached it).
// Window algorithms fall short by design: a window admits its limit per window,
// not burst + rate × elapsed.
func (o OverGrant) Under() int64 {
	return max(0, int64(math.Floor(o.Bound))-o.Admitted)
}

// CheckOverGrant hammers one fresh key of l, built for p, from goroutines goroutines
// for d, and counts what it admitted against p's bound.
func CheckOverGrant(l limiters.Limiter, p limiters.Policy, goroutines int, d time.Duration) OverGrant {
	var (
		admitted, decisions, errs atomic.Int64
		firstErr                  atomic.Pointer[error]
		ready, done               sync.WaitGroup
		release                   = make(chan struct{})
	)
	ctx := context.Background()
	var deadline time.Time
	for range goroutines {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			decide := l.Worker()
			ready.Done()
			<-release
			var a, n int64
			for time.Now().Before(deadline) {
				ok, err := decide(ctx, "over-grant")
				n++
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				if ok {
					a++
				}
			}
			admitted.Add(a)
			decisions.Add(n)
		}()
	}
	ready.Wait()
	start := time.Now()
	deadline = start.Add(d)
	close(release)
	done.Wait()
	elapsed := time.Since(start)
	res := OverGrant{
		Admitted:  admitted.Load(),
		Decisions: decisions.Load(),
		Elapsed:   elapsed,
		Errors:    errs.Load(),
		Bound:     float64(p.Burst) + float64(p.Rate)*elapsed.Seconds()/limiters.Period.Seconds(),
	}
	if err := firstErr.Load(); err != nil {
		res.Err = *err
	}
	return res
}
