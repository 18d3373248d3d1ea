package memory_test

import (
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func newTestStore(t testing.TB, clock *storetest.Clock, options ...memory.Option) *memory.Store {
	options = append([]memory.Option{memory.WithClock(clock.Now), memory.WithSweepInterval(0)}, options...)
	s, err := memory.New(options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB, clock *storetest.Clock) core.Store {
		return newTestStore(t, clock)
	})
}

// A store with one shard and a tiny key cap evicts constantly; it must still decide
// every trace exactly, since it only evicts recovered keys or the soonest-recovering.
func TestConformanceWithOneShard(t *testing.T) {
	storetest.Run(t, func(t testing.TB, clock *storetest.Clock) core.Store {
		return newTestStore(t, clock, memory.WithShards(1))
	})
}
