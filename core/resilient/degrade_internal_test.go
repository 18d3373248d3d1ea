package resilient

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

func TestDivide(t *testing.T) {
	tests := []struct {
		policy core.Policy
		n      int64
		want   string // core.Policy.String of the result
	}{
		{core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20)), 2, "api: token_bucket 5/1s burst 10"},
		{core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20)), 3, "api: token_bucket 10/3s burst 6"},
		{core.MustPolicy("api", core.GCRA, core.PerSecond(10)), 4, "api: gcra 10/4s burst 2"},
		{core.MustPolicy("api", core.LeakyBucket, core.PerMinute(6), core.WithBurst(3)), 3, "api: leaky_bucket 2/1m0s burst 1"},
		{core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithDefaultCost(4)), 8, "api: token_bucket 10/8s burst 4"}, // never below the default cost
		{core.MustPolicy("login", core.SlidingLog, core.PerMinute(5)), 2, "login: sliding_log 2/1m0s"},
		{core.MustPolicy("login", core.FixedWindow, core.PerMinute(5)), 10, "login: fixed_window 1/1m0s"},
		{core.MustPolicy("login", core.SlidingWindow, core.PerHour(100)), 3, "login: sliding_window 33/1h0m0s"},
		{core.MustConcurrencyPolicy("export", 2, time.Minute), 2, "export: concurrency 1/1m0s"},
		{core.MustConcurrencyPolicy("export", 2, time.Minute), 5, "export: concurrency 1/1m0s"},
	}
	for _, tt := range tests {
		got, err := divide(tt.policy, tt.n)
		if err != nil {
			t.Errorf("divide(%v, %d): %v", tt.policy, tt.n, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("divide(%v, %d) = %v, want %s", tt.policy, tt.n, got, tt.want)
		}
		if got.DefaultCost() != tt.policy.DefaultCost() || got.Name() != tt.policy.Name() {
			t.Errorf("divide(%v, %d) changed the name or the cost: %v", tt.policy, tt.n, got)
		}
	}
}

// n replicas together never admit more than the policy's rate and capacity, whenever
// the policy has at least n units of both.
func TestDivideNeverExceedsTheWhole(t *testing.T) {
	for _, a := range core.Algorithms() {
		for _, limit := range []int64{7, 10, 60, 1000} {
			for n := int64(1); n <= 7; n++ {
				var p core.Policy
				if a == core.Concurrency {
					p = core.MustConcurrencyPolicy("p", limit, time.Second)
				} else {
					p = core.MustPolicy("p", a, core.PerMinute(limit))
				}
				q, err := divide(p, n)
				if err != nil {
					t.Fatal(err)
				}
				// rate in units per ms, compared as fractions: n*qLimit/qPeriod <= limit/period
				if n*q.Limit()*p.PeriodMillis() > p.Limit()*q.PeriodMillis() || n*q.Capacity() > p.Capacity() {
					t.Errorf("%v over %d replicas: %v each exceeds the whole", p, n, q)
				}
			}
		}
	}
}
