package main

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// virtualClock is the trace's clock: it reads the t_ms of the row being decided.
type virtualClock struct{ ms atomic.Int64 }

func (c *virtualClock) set(ms int64)   { c.ms.Store(ms) }
func (c *virtualClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// decider is what a replay needs of a store: one decision per row, and Close.
type decider interface {
	Decide(ctx context.Context, req core.Request) (core.Result, error)
	Close() error
}

// openStore opens the chosen store on the virtual clock. Redis stores take the
// caller's clock instead of Redis TIME, so that a replay is repeatable; each run
// uses its own key prefix, so that replays never read each other's state.
func openStore(cfg config, clock *virtualClock) (decider, error) {
	switch cfg.store {
	case "memory":
		// No cap on keys: a capped store evicts a key to make room for a new
		// one, and a key evicted while it still restricts would start afresh,
		// which the policy would not have done. Memory grows with the keys of
		// the trace, as it must to decide exactly.
		return memory.New(memory.WithClock(clock.now), memory.WithSweepInterval(0), memory.WithMaxKeys(math.MaxInt))
	case "embedded":
		// TTLs count down on the virtual clock: on the real one, a replay that ran
		// longer than a key's TTL decided it afresh while it still restricted.
		return embedded.NewOnClock(clock.now)
	case "redis":
		// A real server counts TTLs down in real time, and they are set in replay
		// time: the longest margin keeps every key a day beyond its state, for
		// replays of up to a day.
		prefix := fmt.Sprintf("rl:simulate:%d:", time.Now().UnixNano())
		store, err := redisstore.Dial(cfg.redisAddrs, redisstore.WithClock(clock.now), redisstore.WithPrefix(prefix),
			redisstore.WithExpiryMargin(24*time.Hour))
		if err != nil {
			return nil, err
		}
		return hashedKeys{store}, nil
	}
	return nil, fmt.Errorf("unknown store %q", cfg.store)
}

// hashedKeys is a store that holds each key as its hash ("h:" and 32 hex digits,
// keyfuncs.HashSecret): a log's keys may be API keys or tokens (-key header:X-API-Key),
// and a Redis server, unlike the process's memory, outlives the replay and is read by
// others; Redis keys never contain a raw API key. The decisions are the same: the
// hash tells distinct keys apart, and decisions.csv and the report show the log's keys.
type hashedKeys struct{ *redisstore.Store }

func (h hashedKeys) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	req.Key = hashedKey(req.Key)
	return h.Store.Decide(ctx, req)
}

// hashedKey is key's hash as the library's key functions write it: "h:" and the
// first 32 hex digits of its SHA-256.
func hashedKey(key string) string { return "h:" + keyfuncs.HashSecret(key) }
