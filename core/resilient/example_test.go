package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// down is a shared store that is unreachable, as Redis is during an outage.
type down struct{}

var errRefused = fmt.Errorf("dial tcp 10.0.0.5:6379: %w: connection refused", core.ErrStoreUnavailable)

func (down) Decide(context.Context, core.Request) (core.Result, error) {
	return core.Result{}, errRefused
}
func (down) DecideStack(context.Context, []core.Request, []core.Result) (bool, error) {
	return false, errRefused
}
func (down) Release(context.Context, core.Request, uint64) error { return errRefused }
func (down) Close() error                                        { return nil }

// What each failure mode answers while the shared store is down.
func Example() {
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(3))
	login := core.MustPolicy("login", core.SlidingLog, core.PerMinute(5))
	store, err := resilient.New(down{},
		resilient.WithMode(resilient.Local),
		resilient.WithPolicyMode("login", resilient.Closed),
		resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ctx := context.Background()

	// The failed calls open the circuit breaker once a probe confirms the outage.
	for store.Breaker() != resilient.BreakerOpen {
		store.Decide(ctx, core.Request{Policy: api, Key: "ip:192.0.2.99"})
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 4; i++ { // Local: the policy still holds, in process memory
		res, _ := store.Decide(ctx, core.Request{Policy: api, Key: "ip:192.0.2.1"})
		fmt.Println("api allowed:", res.Allowed)
	}
	_, err = store.Decide(ctx, core.Request{Policy: login, Key: "form:username:alice"})
	var unavailable *resilient.UnavailableError
	fmt.Println("login unavailable:", errors.As(err, &unavailable), errors.Is(err, core.ErrStoreUnavailable))
	// Output:
	// api allowed: true
	// api allowed: true
	// api allowed: true
	// api allowed: false
	// login unavailable: true true
}
