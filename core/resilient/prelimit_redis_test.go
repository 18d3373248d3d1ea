package resilient_test

import (
	"context"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A key far over its limit stops reaching Redis: INFO commandstats shows the script
// calls stop growing once the store has refused it, while the pre-limiter refuses
// the rest in process; without the pre-limiter every request is a script call.
func TestRedisPreLimiterSparesRedis(t *testing.T) {
	srv := redistest.StartServer(t)
	stats := admin(t, srv)
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		policy    string
		options   []resilient.Option
		wantCalls int64
	}{
		{"pre-limiter on", "hot-on", nil, 6}, // 5 admitted, 1 refused; the other 194 stay local
		{"pre-limiter off", "hot-off", []resilient.Option{resilient.WithPreLimit(0)}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newReplica(t, srv, append(tt.options, resilient.WithMode(resilient.Closed))...)
			hot := core.MustPolicy(tt.policy, core.SlidingWindow, core.PerMinute(5))
			if _, err := r.store.Decide(ctx, core.Request{Policy: hot, Key: "warm-up"}); err != nil { // loads the script
				t.Fatal(err)
			}
			if err := stats.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			admitted := 0
			for i := 0; i < 200; i++ {
				res, err := r.store.Decide(ctx, core.Request{Policy: hot, Key: "ak:abusive"})
				if err != nil {
					t.Fatal(err)
				}
				if res.Allowed {
					admitted++
				} else if res.RetryAfter <= 0 {
					t.Fatalf("a refusal without Retry-After: %+v", res)
				}
			}
			if admitted != 5 {
				t.Fatalf("admitted %d, want 5", admitted)
			}
			if got := scriptCalls(t, stats); got != tt.wantCalls {
				t.Fatalf("Redis ran %d script calls for 200 decisions, want %d", got, tt.wantCalls)
			}
			families := scrapeRegistry(t, r.registry)
			wantLocal := float64(200 - tt.wantCalls)
			if got := max(metricValue(families, "ratelimit_local_refusals_total", "policy", hot.Name()), 0); got != wantLocal {
				t.Fatalf("ratelimit_local_refusals_total = %v, want %v", got, wantLocal)
			}
		})
	}
}
