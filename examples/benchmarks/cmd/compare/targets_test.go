package main

import (
	"math"
	"testing"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/harness"
)

// redisSeries is a Redis series whose rounds took ns nanoseconds per decision.
func redisSeries(scenario, name string, ours, batched, baseline bool, ns ...float64) *series {
	s := &series{scenario: harness.Scenario{Name: scenario, Kind: harness.KindRedis}, name: name, ours: ours, batched: batched, baseline: baseline}
	for _, x := range ns {
		s.samples = append(s.samples, sample{nsPerOp: x})
	}
	return s
}

func TestTargetRowsPairRoundsAndPickTheBest(t *testing.T) {
	const sc = "redis/hot-key-64"
	all := []*series{
		redisSeries(sc, "ratelimit-redis/gcra", true, false, false, 2000, 1000, 1500),
		redisSeries(sc, "ratelimit-redis/fixed_window", true, false, false, 1600, 2000, 1500),
		redisSeries(sc, "ratelimit-redis/gcra batched", true, true, false, 400, 250, 600),
		redisSeries(sc, "redis_rate", false, false, false, 2000, 1000, 1500),
		redisSeries(sc, "ulule/redis", false, false, false, 1500, 800, 1200),
		redisSeries(sc, "baseline: EVALSHA return 1", false, false, true, 100, 100, 100), // faster, but not a peer
		redisSeries("memory/hot-key", "ratelimit/gcra", true, false, false, 10),          // not Redis
	}
	rows := targetRows(all)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want an unbatched and a batched one: %+v", len(rows), rows)
	}
	unbatched, batched := rows[0], rows[1]
	// Round by round: ours' best is 1600, 1000, 1500 ns; ulule's 1500, 800, 1200.
	want := []float64{1500.0 / 1600, 800.0 / 1000, 1200.0 / 1500}
	for i, x := range want {
		if math.Abs(unbatched.perRound[i]-x) > 1e-9 {
			t.Errorf("unbatched round %d: %v, want %v", i, unbatched.perRound[i], x)
		}
	}
	if unbatched.met() != 1 || unbatched.goal != unbatchedTarget {
		t.Errorf("unbatched: %d rounds met (want 1, %.3f only), goal %v", unbatched.met(), want[0], unbatched.goal)
	}
	// Medians: ours' best 1500 ns (fixed window; gcra's is 1500 too), ulule's 1200.
	if math.Abs(unbatched.ofMedians-0.8) > 1e-9 {
		t.Errorf("unbatched of the medians %v, want 0.8", unbatched.ofMedians)
	}
	want = []float64{5, 4, 2.5}
	for i, x := range want {
		if math.Abs(batched.perRound[i]-x) > 1e-9 {
			t.Errorf("batched round %d: %v, want %v (against redis_rate, not ulule)", i, batched.perRound[i], x)
		}
	}
	if batched.met() != 2 {
		t.Errorf("batched: %d rounds met, want 2", batched.met())
	}
}

func TestTargetRowsUseOnlyRoundsEverySideMeasured(t *testing.T) {
	const sc = "redis/per-user-64"
	all := []*series{
		redisSeries(sc, "ratelimit-redis/gcra", true, false, false, 1000, 1000, 1000),
		redisSeries(sc, "ulule/redis", false, false, false, 1000), // one round: an error stopped it
	}
	rows := targetRows(all)
	if len(rows) != 1 || len(rows[0].perRound) != 1 {
		t.Fatalf("want one unbatched row over the one round both measured: %+v", rows)
	}
	if len(targetRows(all[:1])) != 0 {
		t.Error("a scenario without peers has no target rows")
	}
}
