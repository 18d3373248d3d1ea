package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestOneCallWritesEachPolicysOwnInstant decides two GCRA policies in one script call
// whose charges move their TATs by the same token units, at different refill rates:
// 1 per second and 3 per second both charge 1000 units a request, which are 1000 ms of
// the first and 333⅓ of the second. A call keeps the text of its last instant, so this
// checks that each policy's key is written with its own: 400 ms later the 1-per-second
// policy must still refuse. Both a stack and a batch put the two in one call.
func TestOneCallWritesEachPolicysOwnInstant(t *testing.T) {
	fast := core.MustPolicy("fast", core.GCRA, core.Rate{Limit: 3, Period: time.Second}, core.WithBurst(1))
	slow := core.MustPolicy("slow", core.GCRA, core.PerSecond(1))
	if fast.TokenUnit() != slow.TokenUnit() || fast.RefillPerMilli() == slow.RefillPerMilli() {
		t.Fatalf("the policies must share a token unit and differ in refill: %d/%d and %d/%d",
			fast.TokenUnit(), fast.RefillPerMilli(), slow.TokenUnit(), slow.RefillPerMilli())
	}
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			var ms atomic.Int64
			ms.Store(1_767_225_600_000)
			options := []redisstore.Option{redisstore.WithHashTag(redisstore.TagByKey),
				redisstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) })}
			ctx := context.Background()
			for _, how := range []string{"stack", "batch"} {
				storeOptions := append(options, redisstore.WithPrefix(uniquePrefix()))
				if how == "batch" {
					storeOptions = append(storeOptions, batching)
				}
				store, err := redisstore.New(client, storeOptions...)
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				reqs := []core.Request{{Policy: fast, Key: how}, {Policy: slow, Key: how}}
				if how == "stack" {
					if allowed, err := store.DecideStack(ctx, reqs, make([]core.Result, 2)); err != nil || !allowed {
						t.Fatalf("stack: allowed %v, %v", allowed, err)
					}
				} else {
					results, errs := redisstore.FlushBatch(store, ctx, reqs)
					for i := range results {
						if errs[i] != nil || !results[i].Allowed {
							t.Fatalf("batch decision %d: %+v %v", i, results[i], errs[i])
						}
					}
				}
				ms.Add(400)
				res, err := store.Decide(ctx, core.Request{Policy: slow, Key: how})
				if err != nil || res.Allowed || res.RetryAfter != 600*time.Millisecond {
					t.Fatalf("%s: 400 ms after its one admission, 1 per second gave %+v %v, want a refusal for 600ms", how, res, err)
				}
				ms.Add(-400)
			}
		})
	}
}
