package main

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func newStore(t *testing.T) *memory.Store {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	return store
}

// TestBurstThenRefusal: a client gets its burst of 20 at one instant, then 429.
func TestBurstThenRefusal(t *testing.T) {
	adaptertest.BurstThenRefusal(t, newHandler(newStore(t)), "/items/1", 20)
}

// TestLayers: the report costs 5 of "api", and a login is one decision over "api"
// and its stack.
func TestLayers(t *testing.T) { adaptertest.CheckLayeredExample(t, newHandler(newStore(t))) }
