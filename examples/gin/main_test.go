package main

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httplimit/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	defer store.Close()
	adaptertest.BurstThenRefusal(t, newHandler(store), "/hello", 20)
}
