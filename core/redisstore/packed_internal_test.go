package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestLeanAdmissionsPackWhenTheyFit runs lean scripts alone where an admission's
// fields just fit one packed integer (lua/single_reply.lua) and where they just do not:
// the reply is one integer exactly when the admission does not wait, its remaining
// count is below 2^26 and its reset below 2^27 ms, and either shape reads as the same
// fields.
func TestLeanAdmissionsPackWhenTheyFit(t *testing.T) {
	const start = 1767225600000 // 2026-01-01, moved back to a window's start below
	day := 24 * time.Hour
	for _, c := range []struct {
		name               string
		policy             core.Policy
		charges            int // the last one's reply is checked
		packed             bool
		remaining, resetMs int64
		delayMs            int64
	}{
		{"small", core.MustPolicy("small", core.GCRA, core.PerSecond(5)), 1, true, 4, 200, 0},
		{"remaining just fits", core.MustPolicy("fits", core.TokenBucket, core.Rate{Limit: 1 << 26, Period: day}), 1, true, 1<<26 - 1, 2, 0},
		{"remaining too large", core.MustPolicy("large", core.TokenBucket, core.Rate{Limit: 1<<26 + 1, Period: day}), 1, false, 1 << 26, 2, 0},
		{"reset just fits", core.MustPolicy("day", core.FixedWindow, core.Rate{Limit: 3, Period: 134217727 * time.Millisecond}), 1, true, 2, 134217727, 0},
		{"reset too late", core.MustPolicy("late", core.FixedWindow, core.Rate{Limit: 3, Period: 134217728 * time.Millisecond}), 1, false, 2, 134217728, 0},
		{"waits", core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3)), 2, false, 2, 2000, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			onBothServers(t, func(t *testing.T, client *redis.Client) {
				ctx := context.Background()
				lean := loadScripts().single[c.policy.Algorithm()]
				now := int64(start) // the windows' start: a multiple of their periods
				if period := c.policy.PeriodMillis(); c.policy.Algorithm() == core.FixedWindow {
					now -= now % period
				}
				args := []any{"eval", lean.source, 1, "k", now, int64(0)}
				for _, n := range leanNumbers(&c.policy) {
					args = append(args, n)
				}
				args = append(args, int64(1))
				var reply any
				for range c.charges {
					cmd := redis.NewCmd(ctx, args...)
					if err := client.Process(ctx, cmd); err != nil {
						t.Fatal(err)
					}
					reply = cmd.Val()
				}
				if _, isInt := reply.(int64); isInt != c.packed {
					t.Fatalf("reply %#v: packed %v, want %v", reply, isInt, c.packed)
				}
				req := core.Request{Policy: c.policy, Key: "k"}
				var res core.Result
				if err := parseLeanReply(reply, &req, &res); err != nil {
					t.Fatal(err)
				}
				want := time.Millisecond
				if !res.Allowed || res.Remaining != c.remaining || res.ResetAfter != time.Duration(c.resetMs)*want || res.Delay != time.Duration(c.delayMs)*want {
					t.Fatalf("reply %#v reads as %+v, want remaining %d, reset %dms, delay %dms", reply, res, c.remaining, c.resetMs, c.delayMs)
				}
			})
		})
	}
}
