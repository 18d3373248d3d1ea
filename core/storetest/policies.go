package storetest

import (
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Policies is the set of policies the suite replays traces through: every algorithm
// with round and awkward rates, bursts above and below the limit, sub-millisecond
// emission intervals, and default costs above one.
func Policies() []core.Policy {
	var ps []core.Policy
	add := func(p core.Policy, err error) {
		if err != nil {
			panic(fmt.Sprintf("storetest: %v", err))
		}
		ps = append(ps, p)
	}
	rates := []core.Rate{
		{Limit: 10, Period: time.Second},
		{Limit: 7, Period: 3 * time.Second},
		{Limit: 3, Period: 250 * time.Millisecond},
		{Limit: 2500, Period: time.Second}, // 2.5 per millisecond
	}
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket} {
		for i, rate := range rates {
			add(core.NewPolicy(fmt.Sprintf("%s-%d", alg, i), alg, rate))
			add(core.NewPolicy(fmt.Sprintf("%s-%d-burst", alg, i), alg, rate, core.WithBurst(rate.Limit*2+1)))
		}
		add(core.NewPolicy(string(alg)+"-small-burst", alg, core.PerSecond(10), core.WithBurst(3)))
		add(core.NewPolicy(string(alg)+"-weighted", alg, core.PerSecond(20), core.WithDefaultCost(3)))
	}
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingLog, core.SlidingWindow} {
		for i, rate := range rates[:3] {
			add(core.NewPolicy(fmt.Sprintf("%s-%d", alg, i), alg, rate))
		}
		add(core.NewPolicy(string(alg)+"-weighted", alg, core.PerSecond(20), core.WithDefaultCost(3)))
	}
	add(core.NewConcurrencyPolicy("concurrency-2", 2, time.Second))
	add(core.NewConcurrencyPolicy("concurrency-5", 5, 300*time.Millisecond))
	return ps
}
