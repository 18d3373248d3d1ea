package resilient_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A standalone server is one master: once the opening of one slot's breaker is
// confirmed, every key follows its failure mode without a call. The store had answered
// 21 decisions, so the outage's first failures are too few a share of the window for
// the store-wide breaker (its rate is 90% where slots are tracked). Before the Redis
// store named its one server (redisstore.Store.Node), each of the 20 keys below
// called the stopped or dead server until its own slot's breaker opened, decided
// meanwhile as a slow call, and a key Redis never answered for was refused, in Local
// mode, until then. After SIGCONT, or a restart on the same port, keys are decided by
// Redis again.
func TestRedisStandaloneOutageSendsEveryKeyToLocalMode(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
			rec := &recorder{}
			store := dialStoresWith(t, []string{srv.Addr}, 1, nil, resilient.WithMonitor(rec))[0]
			namer, err := redisstore.Dial([]string{srv.Addr})
			if err != nil {
				t.Fatal(err)
			}
			defer namer.Close()
			first := "user:first"
			slots := map[int]bool{resilient.SlotOf(namer.Key(p, first)): true}
			var others []string
			for i := 0; len(others) < 20; i++ {
				key := fmt.Sprintf("user:%d", i)
				if slot := resilient.SlotOf(namer.Key(p, key)); !slots[slot] {
					others, slots[slot] = append(others, key), true
				}
			}
			newcomer := "user:never-answered"
			ctx := context.Background()
			req := func(key string) core.Request { return core.Request{Policy: p, Key: key} }
			for _, key := range append([]string{first}, others...) {
				if res, err := store.Decide(ctx, req(key)); err != nil || !res.Allowed {
					t.Fatalf("before the fault, %s: %+v, %v", key, res, err)
				}
			}

			if err := f.inject(srv); err != nil {
				t.Fatal(err)
			}
			decideUntilOpen(t, store, req(first))
			before := len(rec.outcomes())
			admittedFromLastAnswers(t, store, p, others, 8)
			if res, err := store.Decide(ctx, req(newcomer)); err != nil || !res.Allowed || res.Remaining != 9 {
				t.Fatalf("%s, never answered: %+v, %v; want admitted from a full allowance (9 left)", newcomer, res, err)
			}
			for i, o := range rec.outcomes()[before:] {
				if o != "api:allowed/local" {
					t.Errorf("decision %d of the outage: %s, want api:allowed/local (no call)", i+1, o)
				}
			}

			if err := f.recover(srv); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the keys back on Redis", func() bool { return store.BreakerFor(req(others[0])) == resilient.BreakerClosed })
			if res, err := store.Decide(ctx, req(others[0])); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
				t.Fatalf("%s after the fault: %+v, %v; want decided by Redis", others[0], res, err)
			}
		})
	}
}
