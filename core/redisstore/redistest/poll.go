package redistest

import (
	"context"
	"time"
)

// pollInterval is how often poll checks.
const pollInterval = 20 * time.Millisecond

// poll calls check, with a context of at most a second, every pollInterval until it
// reports done or ctx ends, and reports whether it was done.
func poll(ctx context.Context, check func(ctx context.Context) bool) bool {
	for {
		callCtx, cancel := context.WithTimeout(ctx, time.Second)
		done := check(callCtx)
		cancel()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pollInterval):
		}
	}
}
