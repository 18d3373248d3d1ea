package redisstore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// testRefund replays traces of decisions and refunds through every policy of the
// conformance suite, with a clock that sometimes goes back, and compares every
// decision with core's transitions, where a refund is transition.Refund.
func testRefund(t *testing.T, client redis.UniversalClient, steps int) {
	for _, p := range storetest.Policies() {
		t.Run(p.Name(), func(t *testing.T) {
			clock := storetest.NewClock()
			store, err := redisstore.New(client, redisstore.WithClock(clock.Now), redisstore.WithPrefix(uniquePrefix()))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, uint64(len(p.Name()))))
			states := map[string]transition.State{}
			at := storetest.Start
			for i := 0; i < steps; i++ {
				switch rng.IntN(4) {
				case 0:
				case 1:
					at += rng.Int64N(max(2, p.PeriodMillis()/p.Limit()+2))
				case 2:
					at += rng.Int64N(p.PeriodMillis() + 1)
				default:
					at -= rng.Int64N(p.PeriodMillis()/4 + 1) // refunds and decisions from a clock behind
				}
				clock.Set(at)
				key := []string{"alice", "bob"}[rng.IntN(2)]
				req := core.Request{Policy: p, Key: key, Cost: 1 + rng.Int64N(p.Capacity()), Lease: uint64(i + 1)}
				if rng.IntN(3) == 0 {
					if err := store.Refund(context.Background(), req); err != nil {
						t.Fatalf("step %d: refund: %v", i, err)
					}
					if s, ok := states[key]; ok {
						states[key] = transition.Refund(s, &req.Policy, at, req.EffectiveCost())
					}
					continue
				}
				got, err := store.Decide(context.Background(), req)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				next, want := transition.StepRequest(states[key], &req, at)
				if want.Allowed {
					states[key] = next
				}
				if got != want {
					t.Fatalf("step %d (t=%+dms cost %d):\n got %+v\nwant %+v", i, at-storetest.Start, req.Cost, got, want)
				}
			}
		})
	}
}

func TestRefundMiniredis(t *testing.T) { testRefund(t, newMiniredisClient(t), 60) }

func TestRefundRedis(t *testing.T) { testRefund(t, standaloneClient(t), 300) }

// TestRefundValidates: a refund checks its request like a decision does.
func TestRefundValidates(t *testing.T) {
	store, err := redisstore.New(newMiniredisClient(t))
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("refund-invalid", core.TokenBucket, core.PerSecond(5))
	for _, req := range []core.Request{{Key: "k"}, {Policy: p, Key: "k", Cost: 9}, {Policy: p}} {
		if err := store.Refund(context.Background(), req); err == nil {
			t.Errorf("refund of %+v succeeded", req)
		}
	}
}
