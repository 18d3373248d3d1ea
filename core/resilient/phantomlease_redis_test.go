package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// The phantom on a real redis-server: the server sleeps (DEBUG SLEEP) while a
// concurrency acquire is on its way, the call passes its deadline and Local mode
// grants the lease, then the server wakes and runs the script: it holds the lease
// too. Once the request ends, its release also releases it there, and the key's
// slots are free again; before, the phantom held one for the lease timeout.
func TestRedisTimedOutAcquireLeavesNoPhantom(t *testing.T) {
	srv := redistest.StartServer(t, "--enable-debug-command", "yes")
	clock := storetest.NewClock()
	shared := newPartition(t, srv.NewClient(), clock, "phantom:")
	r := newRigOver(t, clock, shared, neverOpen, resilient.WithDeadline(50*time.Millisecond))
	r.store.ReleasePassesByHand()
	ctx := context.Background()

	// A warm connection and a loaded script: the acquire is then one write that waits
	// in the server's socket (a new connection would wait for its handshake instead).
	warm := core.Request{Policy: uploads, Key: "warm", Lease: 99}
	if res, err := r.store.Decide(ctx, warm); err != nil || !res.Allowed {
		t.Fatalf("warm-up: %+v, %v", res, err)
	}
	if err := r.store.Release(ctx, warm, 99); err != nil {
		t.Fatal(err)
	}
	asleep := make(chan error, 1)
	go func() { asleep <- admin(t, srv).Do(context.Background(), "DEBUG", "SLEEP", "0.3").Err() }()
	time.Sleep(50 * time.Millisecond) // the server is asleep: the acquire waits in its socket
	res, err := r.store.Decide(ctx, upload(1))
	if err != nil || !res.Allowed {
		t.Fatalf("an acquire past its deadline, Local mode: %+v, %v; want a local lease", res, err)
	}
	if err := <-asleep; err != nil {
		t.Fatal(err)
	}
	if got := slotsHeld(t, shared.Store); got != 1 {
		t.Fatalf("the server woke and ran the acquire: it holds %d slots; want 1, the phantom", got)
	}
	if err := r.store.Release(ctx, upload(1), 1); err != nil {
		t.Fatal(err)
	}
	r.store.ReleasePass()
	if got := slotsHeld(t, shared.Store); got != 0 {
		t.Errorf("the request ended: the server holds %d slots; want 0", got)
	}
}
