package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// extremePolicies are policies at the edges of what core.NewPolicy accepts: limits from
// 1 to 10^9 (and an awkward prime), periods from 1ms to a day, bursts of 1 and of the
// limit. Policies too fine-grained to decide exactly are rejected by core and skipped.
func extremePolicies() []core.Policy {
	var ps []core.Policy
	limits := []int64{1, 3, 1000, 999_999_937, 1_000_000_000}
	periods := []time.Duration{time.Millisecond, 7 * time.Millisecond, time.Second, time.Hour, 24 * time.Hour}
	for _, limit := range limits {
		for _, period := range periods {
			rate := core.Rate{Limit: limit, Period: period}
			name := fmt.Sprintf("%d-per-%v", limit, period)
			for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
				if p, err := core.NewPolicy(string(alg)+"-"+name, alg, rate); err == nil {
					ps = append(ps, p)
				}
				if alg == core.TokenBucket || alg == core.GCRA || alg == core.LeakyBucket {
					if p, err := core.NewPolicy(string(alg)+"-burst1-"+name, alg, rate, core.WithBurst(1)); err == nil {
						ps = append(ps, p)
					}
				}
			}
			if p, err := core.NewConcurrencyPolicy("concurrency-"+name, limit, period); err == nil {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// testPrecision replays random steps through every extreme policy and compares each
// result with core's pure transition, field for field.
func testPrecision(t *testing.T, client redis.UniversalClient, steps int) {
	clock := storetest.NewClock()
	store, err := redisstore.New(client, redisstore.WithClock(clock.Now), redisstore.WithPrefix(uniquePrefix()))
	if err != nil {
		t.Fatal(err)
	}
	policies := extremePolicies()
	if len(policies) < 150 {
		t.Fatalf("only %d extreme policies are valid", len(policies))
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, p := range policies {
		states := map[string]transition.State{}
		at := storetest.Start + rng.Int64N(p.PeriodMillis()+1)
		for i := 0; i < steps; i++ {
			switch rng.IntN(6) {
			case 0: // same instant
			case 1:
				at++
			case 2:
				at += max(1, p.PeriodMillis()/p.Limit())
			case 3:
				at += p.PeriodMillis()
			case 4:
				at += rng.Int64N(p.PeriodMillis() + 1)
			default:
				at += 24 * 3600 * 1000 * rng.Int64N(3)
			}
			clock.Set(at)
			cost := []int64{1, p.Capacity(), 1 + rng.Int64N(p.Capacity())}[rng.IntN(3)]
			key := []string{"a", "b"}[rng.IntN(2)]
			req := core.Request{Policy: p, Key: key, Cost: cost, Lease: rng.Uint64()}
			got, err := store.Decide(context.Background(), req)
			if err != nil {
				t.Fatalf("%s step %d: %v", p, i, err)
			}
			next, want := transition.StepRequest(states[key], &req, at)
			if want.Allowed {
				states[key] = next
			}
			if got != want {
				t.Fatalf("%s step %d (t=+%dms cost %d):\n got %+v\nwant %+v", p, i, at-storetest.Start, cost, got, want)
			}
		}
	}
}

func TestPrecisionMiniredis(t *testing.T) { testPrecision(t, newMiniredisClient(t), 12) }

func TestPrecisionRedis(t *testing.T) { testPrecision(t, standaloneClient(t), 40) }
