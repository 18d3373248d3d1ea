package main

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
)

// virtualClock is the trace's clock: it reads the t_ms of the row being decided.
type virtualClock struct{ ms atomic.Int64 }

func (c *virtualClock) set(ms int64)   { c.ms.Store(ms) }
func (c *virtualClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// openStore opens the chosen store on the virtual clock. Redis stores take the
// caller's clock instead of Redis TIME, so that a replay is repeatable; each run
// uses its own key prefix, so that replays never read each other's state.
func openStore(cfg config, clock *virtualClock) (core.Store, error) {
	switch cfg.store {
	case "memory":
		// No cap on keys: a capped store evicts a key to make room for a new
		// one, and a key evicted while it still restricts would start afresh,
		// which the policy would not have done. Memory grows with the keys of
		// the trace, as it must to decide exactly.
		return memory.New(memory.WithClock(clock.now), memory.WithSweepInterval(0), memory.WithMaxKeys(math.MaxInt))
	case "embedded":
		return embedded.New(redisstore.WithClock(clock.now))
	case "redis":
		prefix := fmt.Sprintf("rl:simulate:%d:", time.Now().UnixNano())
		return redisstore.Dial(cfg.redisAddrs, redisstore.WithClock(clock.now), redisstore.WithPrefix(prefix))
	}
	return nil, fmt.Errorf("unknown store %q", cfg.store)
}
