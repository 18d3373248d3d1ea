package redisstore_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

var dialBoundPolicy = core.MustPolicy("dial-bound", core.GCRA, core.PerSecond(10))

// Dial's client makes at most two connection attempts per decision against a server
// that drops every connection (one command, one retry, one dial each): no retry
// storm. go-redis's defaults make up to 4 commands of 5 dials each.
func TestDialDoesNotStormADeadServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepts atomic.Int64
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			conn.Close()
		}
	}()
	store, err := redisstore.Dial([]string{l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const decisions = 5
	var slowest time.Duration
	for i := 0; i < decisions; i++ {
		start := time.Now()
		_, err := store.Decide(context.Background(), core.Request{Policy: dialBoundPolicy, Key: "k"})
		slowest = max(slowest, time.Since(start))
		if err == nil {
			t.Fatal("a server that drops every connection decided")
		}
	}
	got := accepts.Load()
	t.Logf("%d decisions against a server that drops connections: %d connection attempts (bound %d), slowest decision %v",
		decisions, got, 2*decisions, slowest.Round(time.Millisecond))
	if got > 2*decisions {
		t.Fatalf("%d connection attempts for %d decisions: a retry storm", got, decisions)
	}
}

// A decision against a killed server fails as unavailable, and each one is bounded
// (logged: at most about 250ms by Dial's settings, where go-redis's defaults take 1.65s).
func TestDialAgainstAKilledServer(t *testing.T) {
	srv := redistest.StartServer(t)
	store, err := redisstore.Dial([]string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	if _, err := store.Decide(ctx, core.Request{Policy: dialBoundPolicy, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	var total, slowest time.Duration
	const decisions = 10
	for i := 0; i < decisions; i++ {
		start := time.Now()
		_, err := store.Decide(ctx, core.Request{Policy: dialBoundPolicy, Key: "k"})
		d := time.Since(start)
		total += d
		slowest = max(slowest, d)
		if !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatalf("decision %d against a killed server: %v, want core.ErrStoreUnavailable", i, err)
		}
	}
	t.Logf("killed server: %d decisions, mean %v, slowest %v per decision", decisions,
		(total / decisions).Round(time.Millisecond), slowest.Round(time.Millisecond))
}
