package resilient_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A few seconds of faults under traffic (a hung server, its return, a crash and a
// restart) leak no goroutines and no connections: once the stores are closed, both
// counts are back to their baselines.
func TestRedisFaultsLeakNothing(t *testing.T) {
	srv := redistest.StartServer(t)
	stats := admin(t, srv)
	ctx := context.Background()
	baseClients := info(t, stats, "clients", "connected_clients") // the admin client
	baseGoroutines := runtime.NumGoroutine()

	a := newReplica(t, srv, resilient.WithReplicas(2))
	b := newReplica(t, srv, resilient.WithReplicas(2), resilient.WithMode(resilient.Open))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := []*replica{a, b}[w%2]
			export := core.MustConcurrencyPolicy("export", 2, time.Minute)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r.store.Decide(ctx, core.Request{Policy: tenPerMinute, Key: "ip:192.0.2." + string(rune('0'+i%10))})
				req := core.Request{Policy: export, Key: "ip:192.0.2.1", Lease: uint64(w<<32 | i)}
				if res, err := r.store.Decide(ctx, req); err == nil && res.Allowed {
					r.store.Release(ctx, req, res.Lease)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	step := func(what string, do func() error, wait time.Duration) {
		if do != nil {
			if err := do(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		time.Sleep(wait)
	}
	step("healthy", nil, 300*time.Millisecond)
	step("pause", srv.Pause, time.Second)
	step("resume", srv.Resume, 500*time.Millisecond)
	step("kill", srv.Kill, 500*time.Millisecond)
	step("restart", srv.Restart, 0)
	deadline := time.Now().Add(5 * time.Second)
	for a.store.Breaker() != resilient.BreakerClosed || b.store.Breaker() != resilient.BreakerClosed {
		if time.Now().After(deadline) {
			t.Fatal("the replicas did not come back within 5s of the restart")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err := a.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Close(); err != nil {
		t.Fatal(err)
	}

	// The restarted server counts its connections afresh: the admin client
	// reconnects, so the baseline is still the admin client alone.
	settle(t, "goroutines", func() int64 { return int64(runtime.NumGoroutine()) }, int64(baseGoroutines))
	settle(t, "connected_clients", func() int64 { return info(t, stats, "clients", "connected_clients") }, baseClients)
}

// settle waits up to 5 seconds for count to fall to at most want.
func settle(t *testing.T, what string, count func() int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := count()
		if got <= want {
			return
		}
		if time.Now().After(deadline) {
			if what == "goroutines" {
				buf := make([]byte, 1<<16)
				t.Logf("%s", buf[:runtime.Stack(buf, true)])
			}
			t.Fatalf("%s: %d after closing everything, want at most the baseline %d", what, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
