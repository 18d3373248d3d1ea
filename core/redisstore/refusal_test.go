package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// clockedStore is a store on a real server whose clock the test sets (in ms since the
// epoch), with an expiry margin of 1 ms.
func clockedStore(t *testing.T, options ...redisstore.Option) (*redisstore.Store, *redis.Client, *atomic.Int64) {
	t.Helper()
	client := standaloneClient(t)
	var ms atomic.Int64
	options = append([]redisstore.Option{redisstore.WithPrefix(uniquePrefix()), redisstore.WithExpiryMargin(time.Millisecond),
		redisstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) })}, options...)
	store, err := redisstore.New(client, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, client, &ms
}

// expireTime is the absolute instant a key expires at, as the server keeps it.
func expireTime(t *testing.T, client *redis.Client, key string) time.Duration {
	t.Helper()
	at, err := client.PExpireTime(context.Background(), key).Result()
	if err != nil || at <= 0 {
		t.Fatalf("PEXPIRETIME %s: %v %v, want an expiry", key, at, err)
	}
	return at
}

// TestRefusalLeavesStateAsItWas: once a key is exhausted, refusals write nothing: the
// key's value and its absolute expiry stay exactly as they were, and each refusal
// reports the same wait.
func TestRefusalLeavesStateAsItWas(t *testing.T) {
	store, client, ms := clockedStore(t)
	ctx := context.Background()
	for _, c := range []struct {
		alg   core.Algorithm
		retry time.Duration
	}{
		{core.TokenBucket, 20 * time.Second},
		{core.GCRA, 20 * time.Second},
		{core.LeakyBucket, 20 * time.Second},
		{core.FixedWindow, 45 * time.Second},
		{core.SlidingWindow, 65 * time.Second}, // the previous window still counts: transition.Step agrees
	} {
		ms.Store(1_767_225_600_000 + 15_000) // 45 s before the minute's window ends
		p := core.MustPolicy("refusal", c.alg, core.PerMinute(3))
		key := store.Key(p, "alice")
		for {
			res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Allowed {
				break
			}
		}
		value, expiry := client.Get(ctx, key).Val(), expireTime(t, client, key)
		for i := 0; i < 5; i++ {
			res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"})
			if err != nil || res.Allowed || res.RetryAfter != c.retry {
				t.Fatalf("%v: refusal %d: %+v %v, want refused, retry after %v", c.alg, i, res, err, c.retry)
			}
			if v, e := client.Get(ctx, key).Val(), expireTime(t, client, key); v != value || e != expiry {
				t.Fatalf("%v: refusal %d left %q expiring at %v, want %q at %v", c.alg, i, v, e, value, expiry)
			}
		}
	}
}

// TestBatchKeepsEachWindow: in a batch, each decision of a fixed window reports its
// own key's window. A key whose state lies in a later window (written by a clock ahead
// of this one) counts in that window, and the key decided after it in the same batch
// still reports the end of the batch instant's window.
func TestBatchKeepsEachWindow(t *testing.T) {
	store, _, ms := clockedStore(t, batching)
	ctx := context.Background()
	p := core.MustPolicy("batch-windows", core.FixedWindow, core.PerSecond(10))
	start := int64(1_767_225_600_000)
	ms.Store(start + 5_000) // a clock ahead: ann's state lies in the window of start+5s
	if res, err := store.Decide(ctx, core.Request{Policy: p, Key: "ann"}); err != nil || !res.Allowed {
		t.Fatalf("ann ahead: %+v %v", res, err)
	}
	ms.Store(start + 250)
	got, errs := redisstore.FlushBatch(store, ctx, []core.Request{{Policy: p, Key: "ann"}, {Policy: p, Key: "ben"}})
	for i, want := range []struct {
		remaining int64
		reset     time.Duration
	}{{8, 5750 * time.Millisecond}, {9, 750 * time.Millisecond}} {
		if errs[i] != nil || !got[i].Allowed || got[i].Remaining != want.remaining || got[i].ResetAfter != want.reset {
			t.Errorf("decision %d: %+v %v, want admitted, %d remaining, reset after %v", i, got[i], errs[i], want.remaining, want.reset)
		}
	}
}
