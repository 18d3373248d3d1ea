package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// A refund while one master of a 3-master Cluster is hung or dead: the refund of a
// key on that master is dropped within the deadline, with an error wrapping
// core.ErrStoreUnavailable, and its charge stays (less, never more); a key on a
// healthy master gets its cost back in the window that counted it.
func TestRedisClusterRefundWithAMasterDown(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			c := redistest.StartCluster(t, 3)
			// A day's window: the charge and the last check, seconds apart on the
			// wall clock, never fall in two windows (a minute's did, now and then,
			// and the resumed master's count read 9 of a fresh window).
			api := core.MustPolicy("api", core.FixedWindow, core.Rate{Limit: 10, Period: 24 * time.Hour})
			downKey := clusterKey(t, c, api, 0, "user:a")
			upKey := clusterKey(t, c, api, 1, "user:b")
			store := dialStores(t, c.Addrs(), 1)[0]
			ctx := context.Background()
			charged := map[string]core.Result{}
			for _, key := range []string{downKey, upKey} {
				res, err := store.Decide(ctx, core.Request{Policy: api, Key: key, Cost: 4})
				if err != nil || !res.Allowed || res.DecidedAt.IsZero() {
					t.Fatalf("charge 4 on %q: %+v, %v", key, res, err)
				}
				charged[key] = res
			}
			// Dialled before the fault: loading the slot map from the hung master
			// would wait out the client's read timeout (3 s), close to the node
			// timeout after which the healthy masters refuse every slot too.
			direct, err := redisstore.Dial(c.Addrs())
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			if direct.Node(direct.Key(api, upKey)) == "" {
				t.Fatal("the direct client has no slot map")
			}
			if err := f.inject(c.Servers[0]); err != nil {
				t.Fatal(err)
			}
			// The masters agree the Cluster is down only after the node timeout (5s):
			// until then the healthy ones serve their slots.
			start := time.Now()
			err = store.Refund(ctx, core.Request{Policy: api, Key: downKey, Cost: 4}, charged[downKey].DecidedAt)
			if !errors.Is(err, core.ErrStoreUnavailable) {
				t.Fatalf("refund on the %s master: %v, want an error wrapping core.ErrStoreUnavailable", f.name, err)
			}
			if took := time.Since(start); took > time.Second {
				t.Fatalf("refund on the %s master took %v, want it bounded by the deadline", f.name, took)
			}
			if err := store.Refund(ctx, core.Request{Policy: api, Key: upKey, Cost: 4}, charged[upKey].DecidedAt); err != nil {
				t.Fatalf("refund on a healthy master: %v", err)
			}
			if res, err := direct.Decide(ctx, core.Request{Policy: api, Key: upKey}); err != nil || res.Remaining != 9 {
				t.Fatalf("healthy master after the refund: %+v, %v; want remaining 9", res, err)
			}
			if err := f.recover(c.Servers[0]); err != nil {
				t.Fatal(err)
			}
			if f.name != "hung" { // a killed master without persistence comes back empty
				return
			}
			res, err := direct.Decide(ctx, core.Request{Policy: api, Key: downKey})
			if err != nil || res.Remaining != 5 {
				t.Fatalf("the resumed master: %+v, %v; want remaining 5 (the dropped refund's charge stays)", res, err)
			}
		})
	}
}
