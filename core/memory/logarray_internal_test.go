package memory

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestSlidingLogIsMovedBackRarelyAndStaysExact runs a sliding log of 1,000 entries
// at steady traffic, one request per millisecond, so that every admission ages one
// entry out of the front of the log. The store used to move the whole live log
// back to the start of its array after every such admission: 1,000 entries copied
// per decision, 48 µs per decision at 240,000 entries. Now the log drifts through
// its array and is moved back only when it reaches the end: at most a few entries
// copied per decision, amortized. The decisions and the log stay those of the pure
// transition, across moves, growth and a refund (which copies the log).
func TestSlidingLogIsMovedBackRarelyAndStaysExact(t *testing.T) {
	clock := storetest.NewClock()
	store, err := New(WithShards(1), WithSweepInterval(0), WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const entries = 1000
	p := core.MustPolicy("log", core.SlidingLog, core.Rate{Limit: entries, Period: entries * time.Millisecond})
	req := core.Request{Policy: p, Key: "k"}
	var model transition.State
	decide := func(step int) {
		t.Helper()
		res, err := store.Decide(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var want core.Result
		model, want = transition.StepRequest(model, &req, clock.Millis())
		if res != want {
			t.Fatalf("step %d: got %+v, want %+v", step, res, want)
		}
		clock.Advance(time.Millisecond)
	}
	for i := range 2 * entries { // fill the window, then age a whole one out
		decide(i)
	}
	e := store.shards[0].table.Load().find(store.hash(p.ID(), "k"), p.ID(), "k")
	const decisions = 20 * entries
	copied := 0
	for i := range decisions {
		if i == decisions/2 { // a refund copies the log out of the store's array
			charged := clock.Millis() - 10
			if err := store.Refund(context.Background(), req, time.UnixMilli(charged)); err != nil {
				t.Fatal(err)
			}
			model = transition.Refund(model, &p, clock.Millis(), charged, 1)
		}
		newest := &e.state.Log[len(e.state.Log)-1]
		decide(i)
		if log := e.state.Log; &log[len(log)-2] != newest { // the log moved
			copied += len(log) - 1
		}
		if !slices.Equal(e.state.Log, model.Log) || e.state.Count != model.Count {
			t.Fatalf("step %d: the store's log (%d entries, count %d) is not the transition's (%d, %d)",
				i, len(e.state.Log), e.state.Count, len(model.Log), model.Count)
		}
	}
	if perDecision := float64(copied) / decisions; perDecision > 2 {
		t.Fatalf("%.1f log entries copied per decision on a log of %d entries, want at most 2", perDecision, entries)
	}
	t.Logf("%.2f entries copied per decision on a log of %d", float64(copied)/decisions, len(e.state.Log))
}
