package resilient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// boundedShared is a fake shared store that says its calls end with their context,
// so that the Store decides on the caller's goroutine.
type boundedShared struct{ *fakeShared }

func (boundedShared) BoundedByContext() bool { return true }

// panickingShared is a bounded store whose decisions panic.
type panickingShared struct{ boundedShared }

func (panickingShared) Decide(context.Context, core.Request) (core.Result, error) {
	panic("boom")
}

func newDirectStore(t *testing.T, shared core.Store, clock *storetest.Clock, rec *recorder) *resilient.Store {
	t.Helper()
	store, err := resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithMonitor(rec),
		resilient.WithMode(resilient.Open), resilient.WithDeadline(testDeadline))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func TestStoresBoundedByTheirContext(t *testing.T) {
	mem := memory.MustNew(memory.WithSweepInterval(0))
	defer mem.Close()
	for _, tc := range []struct {
		name  string
		store core.Store
		want  bool
	}{
		{"memory", mem, true},
		{"redis, ContextTimeoutEnabled", redisOver(t, true), true},
		{"redis, without ContextTimeoutEnabled", redisOver(t, false), false},
		{"cluster, ContextTimeoutEnabled", clusterOver(t, true), true},
	} {
		b, ok := tc.store.(resilient.ContextBounded)
		if got := ok && b.BoundedByContext(); got != tc.want {
			t.Errorf("%s: bounded by its context %v, want %v", tc.name, got, tc.want)
		}
	}
}

func redisOver(t *testing.T, contextTimeouts bool) core.Store {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: contextTimeouts})
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func clusterOver(t *testing.T, contextTimeouts bool) core.Store {
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}, ContextTimeoutEnabled: contextTimeouts})
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// A store bounded by its context is called on the caller's goroutine with the deadline
// in its context: a hung call still costs at most the deadline and is decided by the
// policy's mode (Open: unenforced).
func TestDirectDecisionHoldsTheDeadline(t *testing.T) {
	clock := storetest.NewClock()
	shared := boundedShared{newFakeShared(t, clock)}
	defer close(shared.release)
	rec := &recorder{}
	store := newDirectStore(t, shared, clock, rec)
	req := core.Request{Policy: perMinute5, Key: "k"}
	if res, err := store.Decide(context.Background(), req); err != nil || !res.Allowed || res.Unenforced {
		t.Fatalf("healthy: %+v, %v", res, err)
	}
	shared.set(nil, true, false) // hangs until its ctx ends
	start := time.Now()
	res, err := store.Decide(context.Background(), req)
	if waited := time.Since(start); waited > testDeadline+200*time.Millisecond {
		t.Fatalf("waited %v with a deadline of %v", waited, testDeadline)
	}
	if err != nil || !res.Unenforced || !slices.Equal(rec.errorKinds(), []resilient.ErrorKind{resilient.KindTimeout}) {
		t.Fatalf("hung: %+v, %v, errors %v", res, err, rec.errorKinds())
	}
	if shared.calls.Load() != 2 || shared.finished.Load() != 2 {
		t.Fatalf("%d calls, %d finished: the hung call must have ended with its context", shared.calls.Load(), shared.finished.Load())
	}
}

// A panic in a store called on the caller's goroutine is a permanent error, as on the
// guard's goroutine: never an admission.
func TestDirectDecisionPanicIsPermanent(t *testing.T) {
	clock := storetest.NewClock()
	shared := panickingShared{boundedShared{newFakeShared(t, clock)}}
	defer close(shared.release)
	store := newDirectStore(t, shared, clock, &recorder{})
	res, err := store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "k"})
	if !errors.Is(err, resilient.ErrPermanent) || res.Allowed {
		t.Fatalf("%+v, %v", res, err)
	}
}

// Deciding on the caller's goroutine spares the guard's goroutine, channel and copies:
// a decision on a memory shared store allocates only the deadline's context and the
// observers' events.
func TestDirectDecisionAllocations(t *testing.T) {
	shared := memory.MustNew(memory.WithSweepInterval(0))
	store, err := resilient.New(shared, resilient.WithMode(resilient.Open))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	req := core.Request{Policy: core.MustPolicy("api", core.TokenBucket, core.PerSecond(1_000_000_000)), Key: "k"}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if res, err := store.Decide(ctx, req); err != nil || !res.Allowed {
			t.Fatalf("%+v, %v", res, err)
		}
	})
	if allocs > 6 {
		t.Fatalf("%.1f allocations per decision, want at most 6 (the guard goroutine path takes 11)", allocs)
	}
}
